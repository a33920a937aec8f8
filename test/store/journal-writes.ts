/**
 * Seeded journal writes for the aggregate tests (and the child process that is killed in the middle of them):
 * orders inserted and moved through statuses, fills of them (some repeated), on several instances and an
 * external order, fees in the base, the quote or another asset, over several days. The same seed writes the
 * same rows; `recount` reads back what the aggregates must equal, from every row.
 */
import { positionFromFills, utcDay } from '../../src/market/position.js';
import { plain } from '../../src/market/decimal.js';
import { mulberry32 } from '../../src/sim/prng.js';
import type { FeeIn, FillRow } from '../../src/store/fills.js';
import type { PaperOrderRow } from '../../src/store/paper-exchange.js';
import { newOrderRow, type OrderRow } from '../../src/store/order-journal.js';
import type { Store } from '../../src/store/store.js';

const INSTANCES = ['grid', 'trend', undefined] as const;
const SYMBOLS = ['BTCUSDT', 'ETHUSDT'] as const;
const STATUSES = ['OPEN', 'PARTIALLY_FILLED', 'FILLED', 'CANCELED', 'REJECTED', 'UNKNOWN', 'EXPIRED'] as const;
const FEES: readonly FeeIn[] = ['base', 'quote', 'other'];
const DAY = 86_400_000;

/** A seeded writer: `step()` makes one write (an order, a status change or a fill) and says which. */
export function journalWriter(store: Store, seed: number) {
  const random = mulberry32(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  const orders: OrderRow[] = store.orders.active();
  const fills: FillRow[] = [];
  let n = 0;
  // The paper exchange's own books move along: an order, a status change, a fill on its account.
  if (!store.paper.exists()) {
    store.paper.create('live', 0);
    store.paper.putAccount({ userId: 1, funding: { USDT: '1000' }, createdAt: 0 });
  }
  const paperOrders: PaperOrderRow[] = [];
  const paperOrder = (id: number, symbol: string, side: 'BUY' | 'SELL'): PaperOrderRow => ({
    id,
    userId: 1,
    symbol,
    side,
    type: 'LIMIT',
    status: 'NEW',
    quantity: '1',
    price: '1',
    stopPrice: '0',
    limitPrice: '0',
    quoteOrderQty: undefined,
    useQuoteQty: false,
    stop: undefined,
    limit: undefined,
    leg: undefined,
    lockPerUnit: '0',
    locked: '0',
    executedQty: '0',
    executedQuoteQty: '0',
    fee: '0',
    feeRatio: '0',
    createdAt: 0,
    updatedAt: 0,
  });
  const amount = (scale: number, places: number) =>
    plain((Math.floor(random() * scale * 10 ** places) + 1) / 10 ** places);
  return {
    /** The key of the last fill written (fresh, not a repeat). */
    lastFill: undefined as string | undefined,
    step(): 'order' | 'update' | 'fill' | 'repeat' {
      n++;
      const time = 1_700_000_000_000 + n * (DAY / 7);
      const roll = random();
      if (orders.length === 0 || roll < 0.3) {
        const instance = pick(INSTANCES);
        const row = newOrderRow({
          localId: `${seed}-${n}`,
          instance,
          seq: instance === undefined ? undefined : seed * 1_000_000 + n,
          symbol: pick(SYMBOLS),
          side: random() < 0.55 ? 'BUY' : 'SELL',
          type: pick(['LIMIT', 'MARKET'] as const),
          status: 'PENDING',
          external: instance === undefined,
          createdAt: time,
        });
        store.orders.insert(row);
        orders.push(row);
        const paper = paperOrder(seed * 1_000_000 + n, row.symbol, row.side);
        store.paper.putOrder(paper);
        paperOrders.push(paper);
        return 'order';
      }
      const order = pick(orders);
      if (roll < 0.55) {
        const next = {
          ...order,
          status: pick(STATUSES),
          exchangeId: order.exchangeId ?? `x${seed}-${n}`,
          updatedAt: time,
        };
        store.orders.update(next);
        orders[orders.indexOf(order)] = next;
        const paper = pick(paperOrders);
        if (paper !== undefined)
          store.paper.putOrder({ ...paper, status: pick(['NEW', 'PARTIALLY_FILLED', 'FILLED', 'CANCELED'] as const) });
        return 'update';
      }
      if (roll < 0.6 && fills.length > 0) {
        store.fills.insert(pick(fills));
        return 'repeat';
      }
      const fill: FillRow = {
        fillKey: `f${seed}-${n}`,
        orderLocalId: order.localId,
        instance: order.instance,
        symbol: order.symbol,
        side: order.side,
        price: amount(60_000, 2),
        qty: amount(2, 6),
        fee: amount(0.01, 8),
        feeAsset: undefined,
        feeIn: pick(FEES),
        time,
        source: 'trade',
        delivered: false,
        recordedAt: time,
      };
      store.fills.insert(fill);
      fills.push(fill);
      const paper = pick(paperOrders);
      if (paper !== undefined)
        store.paper.insertFill({
          id: seed * 1_000_000 + n,
          orderId: paper.id,
          userId: 1,
          symbol: paper.symbol,
          side: paper.side,
          price: fill.price,
          baseQty: fill.qty,
          quoteQty: '1',
          fee: '0',
          feeAsset: 'USDT',
          feeRatio: '0',
          maker: true,
          time,
        });
      this.lastFill = fill.fillKey;
      return 'fill';
    },
  };
}

/** What the aggregates must equal, counted from every row (the way status and the metrics read before them). */
export function recount(store: Store) {
  const orderCounts = store.db
    .prepare(
      'SELECT instance, symbol, side, type, status, exchange_id IS NOT NULL AS placed, COUNT(*) AS n FROM orders ' +
        'GROUP BY instance, symbol, side, type, status, placed ORDER BY instance, symbol, side, type, status, placed',
    )
    .all();
  const fillTotals = store.db
    .prepare(
      'SELECT instance, symbol, side, COUNT(*) AS n, SUM(CAST(price AS REAL) * CAST(qty AS REAL)) AS notional ' +
        'FROM fills GROUP BY instance, symbol, side ORDER BY instance, symbol, side',
    )
    .all() as { instance: string | null; symbol: string; side: string; n: number; notional: number }[];
  const positions = Object.fromEntries(
    INSTANCES.flatMap((instance) => {
      if (instance === undefined) return [];
      const rows = store.fills.forInstance(instance);
      const tracker = positionFromFills(rows);
      const days = [...new Set(rows.map((f) => utcDay(f.time)))];
      return [
        [instance, figures(tracker.position, Object.fromEntries(days.map((d) => [d, plain(tracker.realisedOn(d))])))],
      ];
    }),
  );
  const count = (sql: string) => (store.db.prepare(sql).get() as { n: number }).n;
  const paper = {
    orders: count('SELECT COUNT(*) AS n FROM paper_orders'),
    openOrders: count("SELECT COUNT(*) AS n FROM paper_orders WHERE status IN ('NEW', 'PARTIALLY_FILLED')"),
    fills: count('SELECT COUNT(*) AS n FROM paper_fills'),
  };
  return { orderCounts, fillTotals, positions, paper };
}

/** The same figures from the aggregates the store keeps as it writes. */
export function kept(store: Store) {
  const positions = Object.fromEntries(
    INSTANCES.flatMap((instance) => {
      if (instance === undefined) return [];
      const rows = store.fills.forInstance(instance);
      const days = [...new Set(rows.map((f) => utcDay(f.time)))];
      const position = store.fills.positions.tracker(instance).position;
      return [
        [
          instance,
          figures(position, Object.fromEntries(days.map((d) => [d, store.fills.positions.realisedOn(instance, d)]))),
        ],
      ];
    }),
  );
  const summary = store.paper.summary();
  const paper = { orders: summary?.orders, openOrders: summary?.openOrders, fills: summary?.fills };
  return { orderCounts: store.orders.counts(), fillTotals: store.fills.totals(), positions, paper };
}

function figures(
  p: { quantity: { toString(): string }; averagePrice: { toString(): string }; realisedPnl: { toString(): string } },
  days: Record<string, string>,
) {
  return {
    quantity: plain(p.quantity.toString()),
    averagePrice: plain(p.averagePrice.toString()),
    realised: plain(p.realisedPnl.toString()),
    days,
  };
}
