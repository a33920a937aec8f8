import { newOrderRow, type OrderRow } from '../../src/store/order-journal.js';

/** A journal row: a PENDING LIMIT BUY of instance "a", with `over` applied. */
export function orderRow(over: Partial<OrderRow> = {}): OrderRow {
  return newOrderRow({
    localId: 'a-1',
    instance: 'a',
    seq: 1,
    symbol: 'BTCUSDT',
    side: 'BUY',
    type: 'LIMIT',
    price: '100',
    quantity: '0.5',
    status: 'PENDING',
    createdAt: 1000,
    sentAt: 1000,
    ...over,
  });
}
