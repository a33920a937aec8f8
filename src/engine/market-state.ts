/**
 * What the engine knows of the market and the account between polls: the latest ticker per symbol, the pair
 * rules, and balances by asset code (the venue keys them by currency id; pair configs and tickers map ids to
 * codes). Balances are lowered locally when an order is sent, so two intents of one tick cannot both spend
 * the same funds; each read replaces them with the venue's figures.
 *
 * The free figures are never above what the venue holds (docs/architecture.md, "Balances between reads"): a
 * read runs outside the engine's lock, so orders may be sent while it is in flight and its answer may not count
 * them. What was lowered locally since a read began is kept and lowered again on top of its answer; a fill's
 * proceeds are never added locally (the next read brings them).
 */
import { BotError } from '../errors.js';
import type { Balances, PairConfig, Ticker } from '../ports/venue-records.js';
import { type Dec, fromWire } from '../market/decimal.js';
import { type PairRules, pairRulesFrom } from '../market/pair-rules.js';
import type { Balance } from '../strategy/api.js';

export class MarketState {
  readonly tickers = new Map<string, Ticker>();
  readonly rules = new Map<string, PairRules>();
  /** Shared by every strategy context (read-only there). */
  readonly balances = new Map<string, Balance>();
  private readonly assetCodes = new Map<string, string>();
  /** The last parsed price per symbol, keyed by the wire value (not the ticker object): Decs are immutable. */
  private readonly prices = new Map<string, { wire: number; price: Dec }>();
  /** The config each pair's rules were derived from. */
  private readonly rulesFrom = new Map<string, PairConfig>();
  /** Bumped whenever `rules` changes, so a context can keep its pair's rules between refreshes. */
  rulesVersion = 0;
  /** Bumped whenever `balances` changes (a refresh, a reservation): what a strategy saw is known unchanged. */
  balancesVersion = 0;
  /** Currency ids the venue reported that no pair or ticker names. */
  unknownAssetIds: string[] = [];
  /** What was lowered locally while a balance read was in flight, numbered: lowered again on its answer. */
  private readonly lowered: { seq: number; asset: string; amount: Dec; locks: boolean }[] = [];
  /** The number the next local lowering takes. */
  private loweredSeq = 0;
  private readsInFlight = 0;
  /** Where the newest read applied began (an older one answering later is dropped). */
  private appliedMark = -1;
  /**
   * The venue's figures a balance entry was read as (an entry lowered here since is a new object, absent): a
   * read that repeats them keeps the entry without parsing them again (most reads between fills change nothing).
   */
  private readonly readAs = new WeakMap<Balance, { value: number; locked: number }>();

  /**
   * Derives the rules of the wanted pairs. A venue that hands out the same (frozen) config object while the
   * config is unchanged (the in-process one) keeps the rules, and so the strategies' caches built on them.
   */
  setPairs(configs: readonly PairConfig[], wanted: ReadonlySet<string>): void {
    let changed = false;
    for (const c of configs) {
      if (c.baseAssetId != null) this.assetCodes.set(String(c.baseAssetId), c.baseAsset);
      if (c.quoteAssetId != null) this.assetCodes.set(String(c.quoteAssetId), c.quoteAsset);
      if (!wanted.has(c.symbol) || this.rulesFrom.get(c.symbol) === c) continue;
      let rules: PairRules;
      try {
        rules = pairRulesFrom(c);
      } catch (err) {
        // A filter figure that is not a number: the pair's rules cannot be known, so nothing is traded on it.
        throw new BotError('E_RESPONSE_SHAPE', err instanceof Error ? err.message : String(err), {
          cause: err,
          context: { symbol: c.symbol },
        });
      }
      this.rules.set(c.symbol, rules);
      this.rulesFrom.set(c.symbol, c);
      changed = true;
    }
    if (changed) this.rulesVersion++;
  }

  /**
   * The symbol's latest ticker. One that repeats the ticker held (the same time and figures: the market has not
   * changed since the last poll) leaves it held, so that the object a strategy saw is the market unchanged (an
   * instance's onTick is not called again on it: InstanceRunner.callTick). A backtest hands the same object to
   * every market job until its symbol's next tick.
   */
  setTicker(t: Ticker): void {
    const previous = this.tickers.get(t.symbol);
    if (previous === t || (previous !== undefined && sameTicker(previous, t))) return;
    this.tickers.set(t.symbol, t);
    // Asset ids from the first ticker of a symbol only: this runs on every tick.
    if (previous === undefined) {
      if (t.baseAssetId !== undefined && t.baseAsset) this.assetCodes.set(String(t.baseAssetId), t.baseAsset);
      if (t.quoteAssetId !== undefined && t.quoteAsset) this.assetCodes.set(String(t.quoteAssetId), t.quoteAsset);
    }
  }

  /** A balance read begins: the mark its answer is applied with (setBalances), then balanceReadEnded. */
  balanceReadStarted(): number {
    this.readsInFlight++;
    return this.loweredSeq;
  }

  /** A balance read answered (after setBalances) or failed. */
  balanceReadEnded(): void {
    this.readsInFlight--;
    if (this.readsInFlight === 0) this.lowered.length = 0;
  }

  /**
   * The venue's balances, as read by a read that began at `mark` (balanceReadStarted): `value` is the total,
   * `locked_value` the locked part of it (spot-api.md). What was lowered locally since `mark` is lowered again
   * (the answer may have been written before those orders reached the venue: counted twice at worst until the
   * next read, never missed). An answer from a read older than one applied already is dropped. An asset whose
   * figures did not change keeps its entry (the object a strategy saw), and balancesVersion moves only when
   * some figure or asset did.
   */
  setBalances(b: Balances, mark: number): void {
    if (mark < this.appliedMark) return;
    this.appliedMark = mark;
    this.replaceBalances(b);
    for (const l of this.lowered) if (l.seq >= mark) this.lower(l.asset, l.amount, l.locks);
  }

  private replaceBalances(b: Balances): void {
    const unknown: string[] = [];
    const next = new Map<string, Balance>();
    let changed = false;
    for (const [id, entry] of Object.entries(b)) {
      const asset = this.assetCodes.get(id);
      if (asset === undefined) {
        unknown.push(id);
        continue;
      }
      const held = this.balances.get(asset);
      const was = held === undefined ? undefined : this.readAs.get(held);
      if (was !== undefined && was.value === entry.value && was.locked === entry.locked_value) {
        next.set(asset, held as Balance);
        continue;
      }
      const total = fromWire(entry.value);
      const locked = fromWire(entry.locked_value);
      const free = total.minus(locked);
      if (held !== undefined && held.free.eq(free) && held.locked.eq(locked)) {
        next.set(asset, held);
        this.readAs.set(held, { value: entry.value, locked: entry.locked_value });
      } else {
        // Frozen: strategies are handed these very entries (ctx.balances), and a repeated read keeps one unseen.
        const balance = Object.freeze({ asset, free, locked });
        next.set(asset, balance);
        this.readAs.set(balance, { value: entry.value, locked: entry.locked_value });
        changed = true;
      }
    }
    if (changed || next.size !== this.balances.size) {
      this.balances.clear();
      for (const [asset, balance] of next) this.balances.set(asset, balance);
      this.balancesVersion++;
    }
    this.unknownAssetIds = unknown;
  }

  /** The symbol's last price, parsed once per price however many instances (and ticks at that price) ask. */
  lastPrice(symbol: string): Dec | undefined {
    const t = this.tickers.get(symbol);
    if (t === undefined) return undefined;
    const cached = this.prices.get(symbol);
    if (cached === undefined) {
      const price = fromWire(t.last);
      this.prices.set(symbol, { wire: t.last, price });
      return price;
    }
    // Updated in place: this runs on every tick some strategy asks for the price.
    if (cached.wire !== t.last) {
      cached.price = fromWire(t.last);
      cached.wire = t.last;
    }
    return cached.price;
  }

  free(asset: string): Dec | undefined {
    return this.balances.get(asset)?.free;
  }

  /** Moves `amount` from free to locked (an order sent) until a read says what the venue holds. */
  reserve(asset: string, amount: Dec): void {
    this.lowerLocally(asset, amount, true);
  }

  /** Takes `amount` off the free figure (a cost no reservation covered) until a read says what the venue holds. */
  spend(asset: string, amount: Dec): void {
    this.lowerLocally(asset, amount, false);
  }

  private lowerLocally(asset: string, amount: Dec, locks: boolean): void {
    const seq = this.loweredSeq++;
    if (this.readsInFlight > 0) this.lowered.push({ seq, asset, amount, locks });
    this.lower(asset, amount, locks);
  }

  private lower(asset: string, amount: Dec, locks: boolean): void {
    const b = this.balances.get(asset);
    if (b === undefined) return;
    this.balances.set(
      asset,
      Object.freeze({ asset, free: b.free.minus(amount), locked: locks ? b.locked.plus(amount) : b.locked }),
    );
    this.balancesVersion++;
  }
}

/** Two tickers of a symbol that say the same (the venue's time and every figure). */
function sameTicker(a: Ticker, b: Ticker): boolean {
  return (
    a.time === b.time &&
    a.last === b.last &&
    a.high === b.high &&
    a.low === b.low &&
    a.baseVolume === b.baseVolume &&
    a.quoteVolume === b.quoteVolume &&
    a.baseAsset === b.baseAsset &&
    a.quoteAsset === b.quoteAsset &&
    a.baseAssetId === b.baseAssetId &&
    a.quoteAssetId === b.quoteAssetId
  );
}
