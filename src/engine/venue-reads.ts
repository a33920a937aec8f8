/**
 * What the engine reads of the account and the pairs besides orders: each traded pair's configuration (its
 * rules, kept in the store for the processes that show figures without the venue) and the balances, read at
 * start, at each refresh, and again after an orders poll that recorded a fill (fills change balances). The
 * start's read holds the engine's lock, and an exit's after it cancelled a SELL (what that freed is known from
 * nothing else); the others run beside the jobs (market-state.ts keeps what orders sent meanwhile lowered). Also
 * the signed read that lifts an authentication halt.
 */
import { D } from '../market/decimal.js';
import type { PairConfig } from '../ports/venue-records.js';
import type { FillRow } from '../store/fills.js';
import type { OrderRow } from '../store/order-journal.js';
import type { EngineParts } from './engine-parts.js';

export class VenueReads {
  /** A fill was recorded since balances were read. */
  private balancesStale = false;
  /** Every pair's config was read once to name the assets of balances no traded pair names. */
  private allAssetsNamed = false;

  constructor(
    private readonly p: EngineParts,
    /** The symbols the instances trade. */
    private readonly symbols: ReadonlySet<string>,
  ) {}

  /** The traded pairs' rules, then the balances. Throws when the venue cannot be read. */
  async pairsAndBalances(): Promise<void> {
    await this.pairs(this.symbols);
    await this.balances();
  }

  /**
   * The rules of `wanted` (one request: the pair's when there is one, else every pair's) into the market state
   * and the store; the configurations read. Throws when the venue cannot be read or a rule is not a number.
   */
  async pairs(wanted: ReadonlySet<string>): Promise<readonly PairConfig[]> {
    const { venue, guard, market, logger, store, clock } = this.p;
    const symbols = [...wanted];
    const only = symbols.length === 1 ? symbols[0] : undefined;
    const configs = await guard.call('pair config', () =>
      only !== undefined ? venue.pairConfig(only) : venue.pairConfig(),
    );
    market.setPairs(configs, wanted);
    // Kept for the processes that show figures without the venue (`bot status`, the notifier): a write that
    // fails costs them the pair's rounding, not this refresh.
    try {
      store.pairRules.put(
        configs.filter((c) => wanted.has(c.symbol)),
        clock.now(),
      );
    } catch (err) {
      logger.debug({ err }, 'pair rules not stored');
    }
    for (const s of symbols)
      if (!configs.some((c) => c.symbol === s))
        logger.warn({ symbol: s }, `pair ${s} missing from the venue's configuration`);
    return configs;
  }

  /** Reads the balances (throws when the venue cannot be read: they are read again after the next fill). */
  async balances(): Promise<void> {
    const { venue, guard, market, logger } = this.p;
    this.balancesStale = false;
    const mark = market.balanceReadStarted();
    try {
      const balances = await guard.call('balance', () => venue.balance());
      market.setBalances(balances, mark);
      // A daemon trading one pair reads that pair's config only: an asset it does not trade (USDC, ETH) has
      // no name yet, and the operator's /balance would not list it. Every pair's config is read once for them.
      if (market.unknownAssetIds.length > 0 && !this.allAssetsNamed) {
        this.allAssetsNamed = true;
        market.setPairs(await guard.call('pair config', () => venue.pairConfig()), this.symbols);
        market.setBalances(balances, mark);
      }
    } catch (err) {
      this.balancesStale = true;
      throw err;
    } finally {
      market.balanceReadEnded();
    }
    if (market.unknownAssetIds.length > 0)
      logger.debug({ ids: market.unknownAssetIds }, 'balances for currency ids no pair names');
  }

  /** Whether a fill was recorded since the balances were last read (they are read again after the poll). */
  get stale(): boolean {
    return this.balancesStale;
  }

  /**
   * A fill was recorded: the balances it changed are read after the poll (balancesIfChanged). Until then what it
   * brought is not counted, and what it cost beyond what its order reserved when sent is taken off at once: a
   * fee in an asset it does not bring (the order reserved none of it), and a MARKET BUY of a base quantity (its
   * reservation was worth the quantity at the last price, the fill's price may be above it).
   */
  fillRecorded(row: OrderRow, fill: FillRow): void {
    this.balancesStale = true;
    const rules = this.p.market.rules.get(row.symbol);
    if (rules === undefined) return;
    const brings = fill.side === 'BUY' ? rules.baseAsset : rules.quoteAsset;
    if (fill.feeAsset !== undefined && fill.feeAsset !== brings && new D(fill.fee).isPos())
      this.p.market.spend(fill.feeAsset, new D(fill.fee));
    if (row.side === 'BUY' && row.type === 'MARKET' && row.quoteAmount === undefined)
      this.p.market.spend(rules.quoteAsset, new D(fill.qty).mul(fill.price));
  }

  /** After an orders poll: the balances read again when a fill changed them (else the previous figures stay). */
  async balancesIfChanged(): Promise<void> {
    if (!this.balancesStale) return;
    try {
      await this.balances();
    } catch (err) {
      this.p.logger.debug(
        { err },
        'balances unavailable after fills: the figures known stay (lowered by orders, never raised by fills)',
      );
    }
  }

  /** Lifts an authentication halt once a signed read succeeds (it throws when the keys still fail). */
  async clearAuthHalt(): Promise<boolean> {
    const { guard, venue } = this.p;
    if (guard.halted === undefined) return false;
    await guard.call('balance (authentication check)', () => venue.balance());
    return guard.clearHalt();
  }
}
