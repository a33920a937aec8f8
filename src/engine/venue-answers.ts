/**
 * What the venue says about an order, believed or refused (design.md invariant 12). No answer may take an
 * order's fills past its quantity, its executed quantity backwards, a price outside the pair's bounds or a
 * fee above the fill's value: such a figure is refused, told once per order and field (a warning naming
 * both), counted by field for the metrics, and the order is resolved from what else is known (its trades,
 * its status, an executed quantity that is possible). An order the venue calls closed is not closed to its
 * strategy until its fills are known: it stays OPEN or PARTIALLY_FILLED until then.
 */
import { D, type Dec, dec, fromWire, plain } from '../market/decimal.js';
import type { PairRules } from '../market/pair-rules.js';
import type { OrderRecord, TradeRecord } from '../ports/venue-records.js';
import type { FeeIn } from '../store/fills.js';
import type { OrderRow } from '../store/order-journal.js';
import type { EngineParts } from './engine-parts.js';
import { parseTime } from './history-pages.js';

/** Statuses under which an order can still trade. */
export function isLiveVenueStatus(status: string): boolean {
  return status === 'NEW' || status === 'PARTIALLY_FILLED';
}

/** A quote-amount order's fills may pass its amount by this share (the venue's rounding), never more. */
const QUOTE_TOLERANCE = new D('1.01');

/** The venue's record of an order, as the journal row's outcome fields. */
export type VenueOutcome = Pick<OrderRow, 'status' | 'venueStatus' | 'execQty' | 'venueCreatedAt'>;

/** Why a number from the wire cannot be a quantity, price or fee, or undefined when it can. */
function notAmount(n: number): string | undefined {
  if (!Number.isFinite(n)) return `${n} is not a finite number`;
  if (n < 0) return `${n} is negative`;
  return undefined;
}

/** Why a price is outside the pair's bounds (or not a price at all), or undefined when it is inside. */
export function priceOutside(rules: PairRules | undefined, price: Dec): string | undefined {
  if (!price.isFinite() || price.lte(0)) return `${price.toFixed()} is not a positive price`;
  if (rules === undefined) return undefined;
  if (price.lt(rules.minPrice)) return `${price.toFixed()} is below the pair's minPrice ${rules.minPrice.toFixed()}`;
  if (rules.maxPrice !== undefined && price.gt(rules.maxPrice))
    return `${price.toFixed()} is above the pair's maxPrice ${rules.maxPrice.toFixed()}`;
  return undefined;
}

/**
 * Whether the venue said the order partly executed: this record, or one before (the row stays PARTIALLY_FILLED
 * from then on, with its fills recorded or not).
 */
function saidPartly(row: OrderRow, record: OrderRecord): boolean {
  return record.status === 'PARTIALLY_FILLED' || row.status === 'PARTIALLY_FILLED';
}

export class VenueAnswers {
  /** `<localId> <field>` already told: one warning per order and field, however many polls repeat it. */
  private readonly told = new Set<string>();
  private readonly counts = new Map<string, number>();
  /**
   * The venue's clock minus ours, as the latest order sent showed it (its createdAt on the venue against when
   * it was sent here): how a time of ours reads on the venue's clock, where no order of its own says it.
   */
  private offsetMs = 0;
  private offsetFrom = -Infinity;

  constructor(private readonly p: EngineParts) {}

  /** Our time `t` on the venue's clock (as far as the latest order sent showed it). */
  toVenueTime(t: number): number {
    return t + this.offsetMs;
  }

  /**
   * When the row's order was created on the venue's clock: what the venue said (its createdAt), else when it
   * was sent here, moved onto the venue's clock. Where every history read about the order starts.
   */
  venueTime(row: OrderRow): number {
    return row.venueCreatedAt ?? this.toVenueTime(row.sentAt ?? row.createdAt);
  }

  /** Figures refused since the start, by field (the metrics' source). */
  refusals(): { field: string; count: number }[] {
    return [...this.counts].map(([field, count]) => ({ field, count }));
  }

  /** One refused figure: counted every time, told once per order and field. */
  refuse(row: OrderRow, field: string, problem: string): void {
    this.counts.set(field, (this.counts.get(field) ?? 0) + 1);
    const key = `${row.localId} ${field}`;
    if (this.told.has(key)) return;
    this.told.add(key);
    this.p.logger.warn(
      { localId: row.localId, exchangeId: row.exchangeId, symbol: row.symbol, field },
      `venue answer refused: order ${row.localId} (exchange id ${row.exchangeId ?? 'none'}) ${field} ${problem}; ` +
        'the order is resolved from its trades, its status and what else the venue says',
    );
  }

  /**
   * The journal fields for what the venue reports of the row's order. `live`: the record came from open orders
   * (whatever its status says). A final status is taken only once the fills recorded cover what the venue
   * executed, and that figure is known: until then the row stays OPEN or PARTIALLY_FILLED, so a strategy
   * never sees its order closed before its fills (and places it again).
   */
  outcome(row: OrderRow, record: OrderRecord, live: boolean): VenueOutcome {
    const { executed, known } = this.executed(row, record);
    const filled = new D(row.filledQty);
    const final = !live && !isLiveVenueStatus(record.status);
    const covered = known && executed.lte(filled) && (record.status !== 'FILLED' || filled.gt(0));
    // An order the venue called partially filled has fills, whether or not their figure came with it: it stays
    // PARTIALLY_FILLED (what the venue said), which the next record cannot take back to nothing executed.
    const nothing = filled.isZero() && executed.isZero() && !saidPartly(row, record);
    const status = final && covered ? record.status : nothing ? 'OPEN' : 'PARTIALLY_FILLED';
    const venueCreatedAt = this.createdAt(row, record);
    return { status, venueStatus: record.status, execQty: plain(executed), venueCreatedAt };
  }

  /** The order's creation on the venue's clock: kept once known; the first sighting also tells the offset. */
  private createdAt(row: OrderRow, record: OrderRecord): number | undefined {
    if (row.venueCreatedAt !== undefined) return row.venueCreatedAt;
    const created = parseTime(record.createdAt);
    if (created !== undefined && row.sentAt !== undefined && row.sentAt >= this.offsetFrom) {
      this.offsetMs = created - row.sentAt;
      this.offsetFrom = row.sentAt;
    }
    return created;
  }

  /**
   * The executed quantity to believe: the record's `executedQty` unless it is impossible (negative, above the
   * order, below what the venue reported before), else what was believed before. FILLED says the whole order
   * executed: for an order of a base quantity, that quantity (another figure with it is refused). `known`: the figure says
   * what the order's fills add up to (a final record without one leaves its trades to tell).
   */
  executed(row: OrderRow, record: OrderRecord): { executed: Dec; known: boolean } {
    const before = new D(row.execQty);
    const raw = record.executedQty;
    let reported: Dec | undefined;
    if (raw !== undefined) {
      const problem = this.executedProblem(row, raw, before);
      if (problem === undefined) reported = dec(raw);
      else this.refuse(row, 'executedQty', problem);
    }
    if (reported?.isZero() === true && saidPartly(row, record)) {
      const when = record.status === 'PARTIALLY_FILLED' ? 'calls' : 'reported before';
      this.refuse(row, 'executedQty', `is 0 on an order the venue ${when} PARTIALLY_FILLED: its trades tell`);
      reported = undefined;
    }
    if (record.status === 'FILLED') {
      // FILLED is all of it: a base quantity's order executed its quantity, whatever figure comes with it.
      if (row.quantity === undefined)
        return reported?.gt(0) === true ? { executed: reported, known: true } : { executed: before, known: false };
      if (reported !== undefined && !reported.eq(row.quantity))
        this.refuse(
          row,
          'executedQty',
          `is ${reported.toFixed()} on an order the venue calls FILLED (of ${row.quantity})`,
        );
      return { executed: new D(row.quantity), known: true };
    }
    return { executed: reported ?? before, known: reported !== undefined };
  }

  private executedProblem(row: OrderRow, raw: number, before: Dec): string | undefined {
    const problem = notAmount(raw);
    if (problem !== undefined) return problem;
    const value = dec(raw);
    const cap = this.baseCap(row);
    if (cap !== undefined && value.gt(cap)) return `${value.toFixed()} is above the order's quantity ${cap.toFixed()}`;
    if (value.lt(before)) return `${value.toFixed()} is below ${before.toFixed()} reported before (it never goes back)`;
    return undefined;
  }

  /** The most base an order can execute: its quantity, or for one by quote amount that amount at the pair's lowest price. */
  private baseCap(row: OrderRow): Dec | undefined {
    if (row.quantity !== undefined) return new D(row.quantity);
    const minPrice = this.p.market.rules.get(row.symbol)?.minPrice;
    if (row.quoteAmount === undefined || minPrice === undefined || !minPrice.gt(0)) return undefined;
    return new D(row.quoteAmount).mul(QUOTE_TOLERANCE).div(minPrice);
  }

  /**
   * Whether a trade of the row's order can be believed: a positive quantity that keeps the order's fills within
   * its quantity (or quote amount), a price inside the pair's bounds, a fee no larger than the fill's value.
   * A refused trade is told and not recorded; the order is resolved from its executed quantity instead.
   */
  believeTrade(row: OrderRow, t: TradeRecord, feeIn: FeeIn): boolean {
    const qtyProblem = notAmount(t.baseQty) ?? (t.baseQty === 0 ? 'is 0' : undefined);
    if (qtyProblem !== undefined) return this.refused(row, 'baseQty', qtyProblem);
    const priceProblem = notAmount(t.price) ?? priceOutside(this.p.market.rules.get(row.symbol), fromWire(t.price));
    if (priceProblem !== undefined) return this.refused(row, 'price', priceProblem);
    const qty = fromWire(t.baseQty);
    const price = fromWire(t.price);
    const filled = new D(row.filledQty).plus(qty);
    if (row.quantity !== undefined && filled.gt(row.quantity))
      return this.refused(
        row,
        'baseQty',
        `${qty.toFixed()} would take the order's fills to ${filled.toFixed()}, past its quantity ${row.quantity}`,
      );
    if (row.quantity === undefined && row.quoteAmount !== undefined) {
      const spent = new D(row.filledQty).mul(row.avgPrice ?? 0).plus(qty.mul(price));
      if (spent.gt(new D(row.quoteAmount).mul(QUOTE_TOLERANCE)))
        return this.refused(
          row,
          'baseQty',
          `${qty.toFixed()} would take the order's fills to ${spent.toFixed()} of quote, past its amount ${row.quoteAmount}`,
        );
    }
    const fee = t.feeMetadata?.feeValue;
    if (fee !== undefined) {
      const feeProblem = notAmount(fee) ?? this.feeAboveValue(dec(fee), qty, price, feeIn);
      if (feeProblem !== undefined) return this.refused(row, 'feeMetadata.feeValue', feeProblem);
    }
    return true;
  }

  /** Why a fee is more than the fill it was charged on is worth (in the asset it is paid in), or undefined. */
  feeAboveValue(fee: Dec, qty: Dec, price: Dec, feeIn: FeeIn): string | undefined {
    const value = feeIn === 'base' ? qty : feeIn === 'quote' ? qty.mul(price) : undefined;
    if (value === undefined || fee.lte(value)) return undefined;
    return `${fee.toFixed()} is more than the fill is worth (${value.toFixed()} in the fee's asset)`;
  }

  /**
   * The price of a fill worked out from an order record (a delta fill): the first of `candidates` that is
   * inside the pair's bounds; the others are told. Undefined when none is.
   */
  deltaPrice(row: OrderRow, candidates: readonly [field: string, price: Dec | undefined][]): Dec | undefined {
    const rules = this.p.market.rules.get(row.symbol);
    for (const [field, price] of candidates) {
      if (price === undefined || price.isZero()) continue;
      const problem = priceOutside(rules, price);
      if (problem === undefined) return price;
      this.refuse(row, field, problem);
    }
    this.refuse(row, 'price', 'is not given anywhere in its record: its fills wait for its trades');
    return undefined;
  }

  private refused(row: OrderRow, field: string, problem: string): false {
    this.refuse(row, field, problem);
    return false;
  }
}
