/**
 * A script of lies for the lying venue (lying-venue.ts): one set per step of a history, drawn by fast-check, in
 * every way the wire's schema lets through that the engine can tell from the truth. An order record's executed
 * quantity missing, negative, beyond the order, not a number, below the truth where its status or an earlier
 * figure denies it (0 or half the order on a FILLED one, 0 on a PARTIALLY_FILLED one or one said to be
 * before, half of what was said before); its price outside the pair's bounds, its fee beyond the fill;
 * trades withheld for a few reads (so an order shows FILLED before its trades), repeated, for orders that do
 * not exist, off the tick, outside the bounds, past their order, with fees beyond their value; reads failing
 * as a 503 does, or an answer that trickles past the client's deadline. The truth stays the matching engine's.
 * Not told: a figure that is possible but false (a CANCELED order's executedQty below the truth, said first),
 * which no venue client can tell from the truth before the trades that deny it.
 */
import fc from 'fast-check';
import type { OrderRecord, TradeRecord } from '../../src/ports/venue-records.js';
import type { LyingVenue, LyingRead } from './lying-venue.js';

export const RECORD_LIES = [
  'missing',
  'zero',
  'negative',
  'above',
  'huge',
  'infinite',
  'backwards',
  'price-outside',
  'fee-beyond',
] as const;
export const TRADE_LIES = [
  'late',
  'repeated',
  'unknown-order',
  'off-tick',
  'price-outside',
  'past-order',
  'fee-beyond',
] as const;

export type RecordLie = (typeof RECORD_LIES)[number];
export type TradeLie = (typeof TRADE_LIES)[number];

/** What the venue says during one step. */
export interface Lies {
  record: RecordLie | 'honest';
  trades: TradeLie | 'honest';
  /** Reads failing this step (a 503, or an answer trickling past the deadline). */
  failing: LyingRead[];
}

export const HONEST: Lies = { record: 'honest', trades: 'honest', failing: [] };

/** One step's lies: honest about half the time in each respect. */
export function liesArbitrary(): fc.Arbitrary<Lies> {
  const either = <T>(lie: fc.Arbitrary<T>) => fc.oneof(fc.constant('honest' as const), lie);
  return fc.record({
    record: either(fc.constantFrom(...RECORD_LIES)),
    trades: either(fc.constantFrom(...TRADE_LIES)),
    failing: fc.subarray(['open-orders', 'history', 'trades'] as LyingRead[], { maxLength: 2 }),
  });
}

/**
 * How a record says an order executed `executed` of `quantity` (what it really did) under `lie`, `before` being
 * the most it was said to have executed before (going back is below that; with nothing said before, the truth).
 */
function executedSaid(lie: RecordLie, executed: number, quantity: number, before = 0): number | undefined {
  switch (lie) {
    case 'missing':
      return undefined;
    case 'zero':
      return 0;
    case 'negative':
      return -5;
    case 'above':
      return quantity * 3;
    case 'huge':
      return 1e308;
    case 'infinite':
      return Infinity;
    case 'backwards':
      return before > 0 ? before / 2 : executed / 2;
    default:
      return executed;
  }
}

/** Applies `lies` to the venue from now on (until the next call). Trades withheld stay so for `lateReads` reads. */
export class Liar {
  private lies: Lies = HONEST;
  /** Trades first seen while late lies were told, and the reads they are withheld for yet. */
  private readonly withheld = new Map<string, number>();
  /** The most each order was said to have executed (a possible figure), by its id. */
  private readonly said = new Map<string, number>();
  /** Orders said PARTIALLY_FILLED (whatever figure came with it), by id: nothing executed is denied from then on. */
  private readonly partly = new Set<string>();

  constructor(
    private readonly venue: LyingVenue,
    private readonly lateReads = 3,
  ) {
    venue.order = (record) => this.order(record);
    venue.trades = (trades) => this.trades(trades);
  }

  tell(lies: Lies): void {
    this.lies = lies;
    this.venue.failing.clear();
    for (const read of lies.failing) this.venue.failing.add(read);
  }

  private order(record: OrderRecord): OrderRecord {
    const id = String(record.displayingId);
    const told = this.lie(record, this.said.get(id), this.partly.has(id));
    if (told.status === 'PARTIALLY_FILLED') this.partly.add(id);
    const figure = told.executedQty;
    if (figure !== undefined && figure > (this.said.get(id) ?? 0) && figure <= record.quantity)
      this.said.set(id, figure);
    return told;
  }

  private lie(record: OrderRecord, before: number | undefined, saidPartly: boolean): OrderRecord {
    const lie = this.lies.record;
    const executed = record.executedQty ?? 0;
    if (lie === 'honest' || (executed === 0 && record.status !== 'FILLED')) return record;
    if (lie === 'price-outside') return { ...record, executedPrice: (record.executedPrice ?? 100) * 1e7 };
    if (lie === 'fee-beyond')
      return { ...record, feeMetadata: { ...record.feeMetadata, value: (record.executedQuoteQty ?? 1) * 50 } };
    // Less than the truth is a lie the engine can tell only where the status or an earlier figure denies it:
    // FILLED is all of it, PARTIALLY_FILLED (now or said before) more than 0, and a figure never goes back.
    const denied =
      (before ?? 0) > 0 ||
      record.status === 'FILLED' ||
      (lie === 'zero' && (record.status === 'PARTIALLY_FILLED' || saidPartly));
    if ((lie === 'zero' || lie === 'backwards') && !denied) return record;
    return { ...record, executedQty: executedSaid(lie, executed, record.quantity, before) };
  }

  private trades(real: TradeRecord[]): TradeRecord[] {
    const lie = this.lies.trades;
    // Withheld trades come out once their reads are done, whatever is told now: late, never lost.
    const shown = real.filter((t) => {
      let left = this.withheld.get(t._id);
      if (left === undefined && lie === 'late') this.withheld.set(t._id, (left = this.lateReads));
      if (left === undefined || left <= 0) return true;
      this.withheld.set(t._id, left - 1);
      return false;
    });
    switch (lie) {
      case 'repeated':
        return [...shown, ...shown];
      case 'unknown-order': {
        const model = shown[0] ?? real[0];
        return model === undefined ? shown : [...shown, { ...model, _id: `${model._id}-ghost`, orderId: '999999999' }];
      }
      case 'off-tick':
        return shown.map((t) => ({ ...t, price: t.price + 0.003 }));
      case 'price-outside':
        return shown.map((t) => ({ ...t, price: t.price * 1e7 }));
      case 'past-order':
        return shown.map((t) => ({ ...t, baseQty: t.baseQty * 1000 }));
      case 'fee-beyond':
        return shown.map((t) => ({ ...t, feeMetadata: { ...t.feeMetadata, feeValue: t.baseQty * t.price * 10 } }));
      default:
        return shown;
    }
  }
}
