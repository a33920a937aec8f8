/**
 * What the engine reads of the account and the pairs besides orders: each traded pair's configuration (its
 * rules, kept in the store for the processes that show figures without the venue) and the balances, read at
 * start, at each refresh, and again after an orders poll that recorded a fill (fills change balances). Also the
 * signed read that lifts an authentication halt.
 */
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
    const { venue, guard, market, logger, store, clock } = this.p;
    const symbols = [...this.symbols];
    const only = symbols.length === 1 ? symbols[0] : undefined;
    const configs = await guard.call('pair config', () =>
      only !== undefined ? venue.pairConfig(only) : venue.pairConfig(),
    );
    market.setPairs(configs, this.symbols);
    // Kept for the processes that show figures without the venue (`bot status`, the notifier): a write that
    // fails costs them the pair's rounding, not this refresh.
    try {
      store.pairRules.put(
        configs.filter((c) => this.symbols.has(c.symbol)),
        clock.now(),
      );
    } catch (err) {
      logger.debug({ err }, 'pair rules not stored');
    }
    for (const s of symbols)
      if (!configs.some((c) => c.symbol === s))
        logger.warn({ symbol: s }, `pair ${s} missing from the venue's configuration`);
    await this.balances();
  }

  /** Reads the balances (throws when the venue cannot be read: they are read again after the next fill). */
  async balances(): Promise<void> {
    const { venue, guard, market, logger } = this.p;
    this.balancesStale = false;
    try {
      const balances = await guard.call('balance', () => venue.balance());
      market.setBalances(balances);
      // A daemon trading one pair reads that pair's config only: an asset it does not trade (USDC, ETH) has
      // no name yet, and the operator's /balance would not list it. Every pair's config is read once for them.
      if (market.unknownAssetIds.length > 0 && !this.allAssetsNamed) {
        this.allAssetsNamed = true;
        market.setPairs(await guard.call('pair config', () => venue.pairConfig()), this.symbols);
        market.setBalances(balances);
      }
    } catch (err) {
      this.balancesStale = true;
      throw err;
    }
    if (market.unknownAssetIds.length > 0)
      logger.debug({ ids: market.unknownAssetIds }, 'balances for currency ids no pair names');
  }

  /** A fill was recorded: the balances it changed are read after the poll (balancesIfChanged). */
  fillRecorded(): void {
    this.balancesStale = true;
  }

  /** After an orders poll: the balances read again when a fill changed them (else the previous figures stay). */
  async balancesIfChanged(): Promise<void> {
    if (!this.balancesStale) return;
    try {
      await this.balances();
    } catch (err) {
      this.p.logger.debug({ err }, 'balances unavailable after fills: using the previous figures');
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
