/**
 * Portfolio limits (issue 41): a strategy file of several pairs may bound what its pairs hold together, beside each
 * pair's own risk limits (risk.ts): how many pairs hold a trade at once (`maxOpenTrades`), how much quote one pair's
 * trade may hold (`stakePerTrade`: an amount, or a share of the free quote balance), and how much all of them may
 * hold (`maxExposure`). What a pair holds is its position (more than dust) and its working buys, valued at its
 * last price. Only entries are checked (a BUY that does not close a short): an exit is never refused by them.
 */
import type { PortfolioLimits } from '../config/strategy-file.js';
import { type Dec, ZERO } from '../market/decimal.js';
import { rounder } from '../market/display.js';
import { remainingBase } from '../store/order-journal.js';
import type { InstanceRunner } from './instance-runner.js';
import type { JournalCache } from './journal-cache.js';
import type { MarketState } from './market-state.js';
import type { PairLists } from './pair-lists.js';
import { isEntry } from './risk.js';

/** What one pair of a group holds: whether it has a trade, and its value in quote. */
interface Holding {
  open: boolean;
  value: Dec;
}

export class Portfolios {
  /** The instances of each multi-pair file, by the file's name. */
  private readonly groups = new Map<string, InstanceRunner[]>();

  constructor(
    runners: readonly InstanceRunner[],
    private readonly journal: JournalCache,
    private readonly market: MarketState,
    private readonly lists: PairLists,
  ) {
    for (const r of runners) this.add(r);
  }

  /** A pair of a strategy file's group (one a pair list took up after the start too). */
  add(r: InstanceRunner): void {
    if (r.group === undefined) return;
    const members = this.groups.get(r.group);
    if (members) members.push(r);
    else this.groups.set(r.group, [r]);
  }

  /** Why `r` may not send an entry worth `notional` (quote, at its worst price) of `quantity` base; undefined: it may. */
  entryProblem(r: InstanceRunner, quantity: Dec, notional: Dec, quoteAsset: string): string | undefined {
    if (r.group === undefined || !isEntry('BUY', quantity, r.position.quantity)) return undefined;
    const unlisted = this.lists.entryProblem(r);
    if (unlisted !== undefined) return unlisted;
    const limits: PortfolioLimits | undefined = r.portfolio;
    if (limits === undefined) return undefined;
    const members = this.groups.get(r.group) ?? [r];
    const shown = rounder(this.market.rules.get(r.symbol));
    const own = this.holding(r);
    if (limits.maxOpenTrades !== undefined && !own.open) {
      const open = members.filter((m) => m !== r && this.holding(m).open).map((m) => m.symbol);
      if (open.length >= limits.maxOpenTrades)
        return `maxOpenTrades ${limits.maxOpenTrades} of ${r.group} reached: ${open.length} ${open.length === 1 ? 'pair holds' : 'pairs hold'} a trade (${open.join(', ')})`;
    }
    if (limits.stakePerTrade !== undefined) {
      const stake = limits.stakePerTrade;
      const free = this.market.free(quoteAsset) ?? ZERO;
      const bound = 'quote' in stake ? stake.quote : free.mul(stake.pctOfFree).div(100);
      const after = own.value.plus(notional);
      if (after.gt(bound)) {
        const what = 'quote' in stake ? stake.quote.toFixed() : `${stake.pctOfFree}% of free ${shown.quote(free)}`;
        return `stakePerTrade ${what} ${quoteAsset}: the trade would hold ${shown.quote(after)} ${quoteAsset} (position and working buys at the last price, with this order)`;
      }
    }
    if (limits.maxExposure !== undefined) {
      let total = notional;
      for (const m of members) total = total.plus(m === r ? own.value : this.holding(m).value);
      if (total.gt(limits.maxExposure))
        return `maxExposure ${limits.maxExposure.toFixed()} ${quoteAsset} of ${r.group}: its pairs would hold ${shown.quote(total)} ${quoteAsset} (positions and working buys at their last price, with this order)`;
    }
    return undefined;
  }

  /** Whether a pair holds a trade: a position (more than dust) or a working buy. */
  holds(r: InstanceRunner): boolean {
    return this.holding(r).open;
  }

  /** A pair's position (dust left out) and working buys, at its last price. */
  private holding(r: InstanceRunner): Holding {
    const last = this.market.lastPrice(r.symbol);
    const step = this.market.rules.get(r.symbol)?.stepSize;
    let position = r.position.quantity;
    if (!position.gt(0) || (step !== undefined && position.lt(step))) position = ZERO;
    const exposure = this.journal.exposure(r.name);
    let buying = exposure.buy;
    for (const row of exposure.byQuote) if (row.side === 'BUY') buying = buying.plus(remainingBase(row, last));
    const base = position.plus(buying);
    return { open: !position.isZero() || buying.gt(0), value: last === undefined ? ZERO : base.mul(last) };
  }
}
