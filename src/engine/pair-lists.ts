/**
 * The pair lists of the strategy files that choose their pairs from the market watch (config/pair-list.ts). Each
 * such file has an instance on every pair it may ever choose (expandPairLists: the market's pairs of its quote
 * asset); its list says which of them may enter. At the first market job of the file's schedule at or after each
 * refresh the list is worked out again on the market the engine holds then (the last ticker of every pair, the
 * pairs' rules, the 24-hour change of the prices it watched): never on anything later, so a backtest chooses
 * exactly as the daemon would have. A pair that leaves the list takes no new entries (refused, naming the list);
 * what it holds is still managed: its strategy is still called while it holds a position or a working order, and
 * its declared exits stand. A pair off the list that holds nothing is not ticked at all.
 *
 * A pair the exchange starts listing after the start (on the market watch, with no instance) is taken up at the first
 * refresh of a list that may choose it (newcomers): the engine reads its rules from the exchange then, once for all
 * the new pairs, and makes its instance; until its rules are read it is left out (the engine logs why), and
 * tried again at the next refresh. Nothing is traded on a pair before its rules are known. While such a pair is not
 * on the list (its rules not read, or the list's filters leave it out), the list's change event says why, once
 * for each reason's kind (newcomersLeftOut).
 */
import {
  isPairListCandidate,
  type PairList,
  type PairListChange,
  pairListChangeText,
  pairListRefresh,
  resolvePairList,
} from '../config/pair-list.js';
import { TIMEFRAME_MS } from '../market/candles.js';
import type { Logger } from '../ops/logger.js';
import type { InstanceRunner } from './instance-runner.js';
import type { MarketState } from './market-state.js';

const HOUR_MS = TIMEFRAME_MS['1h'];
const DAY_HOURS = 24;

/** One file's list: its pairs' instances, those listed now, when it is worked out next. */
interface Group {
  name: string;
  list: PairList;
  schedule: string;
  next: (time: number) => number;
  dueAt: number;
  members: Map<string, InstanceRunner>;
  listed: ReadonlySet<string>;
  /** Why each pair was left out at the last refresh. */
  leftOut: ReadonlyMap<string, string>;
  /** Pairs the exchange listed after the start, not on the list yet: how each was last journaled. */
  newcomers: Map<string, 'new' | 'unread' | 'off'>;
  /** The newcomers asked about at this refresh, and why those whose rules could not be read were left out. */
  asked: Set<string>;
  unread: Map<string, string>;
  /** Per pair, its price at the first market job of each of the last 25 hours and that hour (for the change). */
  hourly: Map<string, Float64Array>;
  sampledHour: number;
}

export class PairLists {
  private readonly groups = new Map<string, Group>();
  /** The earliest time some list is due (Infinity: no pair list). */
  private earliest = Infinity;

  /** `changed`: records a list's change in the journal (the `pairlist-changed` event). */
  constructor(
    runners: readonly InstanceRunner[],
    private readonly market: MarketState,
    private readonly logger: Logger,
    private readonly changed: (time: number, change: PairListChange) => void,
  ) {
    for (const r of runners) {
      const list = r.pairList;
      if (list === undefined || r.group === undefined) continue;
      let g = this.groups.get(r.group);
      if (g === undefined) {
        g = {
          name: r.group,
          list,
          schedule: r.schedule,
          next: pairListRefresh(list),
          dueAt: -Infinity,
          members: new Map(),
          listed: new Set(),
          leftOut: new Map(),
          newcomers: new Map(),
          asked: new Set(),
          unread: new Map(),
          hourly: new Map(),
          sampledHour: NaN,
        };
        this.groups.set(r.group, g);
      }
      g.members.set(r.symbol, r);
    }
    if (this.groups.size > 0) this.earliest = -Infinity;
  }

  /** A pair its file's list took up after the start (its instance made, its rules read): a member from now on. */
  add(r: InstanceRunner): void {
    const g = r.group === undefined ? undefined : this.groups.get(r.group);
    if (g === undefined) return;
    g.members.set(r.symbol, r);
    if (!g.newcomers.has(r.symbol)) g.newcomers.set(r.symbol, 'new');
    g.unread.delete(r.symbol);
  }

  /** A newcomer asked about at this refresh was not taken up (its rules not read): `why`, for its lists' change. */
  notTakenUp(symbol: string, why: string): void {
    for (const g of this.groups.values()) if (g.asked.has(symbol)) g.unread.set(symbol, why);
  }

  /** Whether the market job of `schedule` works out some list (it reads the whole market watch then). */
  onSchedule(schedule: string): boolean {
    for (const g of this.groups.values()) if (g.schedule === schedule) return true;
    return false;
  }

  /**
   * The pairs of `tickers` (a market watch at `now`) that a list of `schedule` due now may choose and that have no
   * instance yet: the exchange listed them after the start. Empty when no list is due, before a symbol is read.
   */
  newcomers(tickers: readonly { readonly symbol: string }[], schedule: string, now: number): string[] {
    if (now < this.earliest) return [];
    const out = new Set<string>();
    for (const g of this.groups.values()) {
      if (g.schedule !== schedule || now < g.dueAt) continue;
      for (const { symbol } of tickers)
        if (!g.members.has(symbol) && isPairListCandidate(g.list, symbol)) {
          out.add(symbol);
          g.asked.add(symbol);
        }
    }
    return [...out];
  }

  /**
   * The earliest time some list is due (Infinity: no pair list): a backtest passing firings at once passes none
   * from then on.
   */
  dueAt(): number {
    return this.earliest;
  }

  /**
   * A market job of `schedule` at `now`, its tickers in the market state: samples the hourly prices, and works out
   * each list of that schedule that is due. Cheap when none is.
   */
  observed(now: number, schedule: string | undefined): void {
    if (now < this.earliest) return;
    let earliest = Infinity;
    for (const g of this.groups.values()) {
      if (schedule === undefined || g.schedule === schedule) {
        this.sample(g, now);
        if (now >= g.dueAt) {
          this.resolve(g, now);
          g.dueAt = g.next(now);
        }
      }
      earliest = Math.min(earliest, g.list.sortBy === 'change' ? now + 1 : g.dueAt);
    }
    this.earliest = earliest;
  }

  /** Why `r` may not enter: its pair is not on its file's list. Undefined: it may (or it has no list). */
  entryProblem(r: InstanceRunner): string | undefined {
    const g = r.group === undefined ? undefined : this.groups.get(r.group);
    if (g === undefined || g.listed.has(r.symbol)) return undefined;
    const why = g.leftOut.get(r.symbol) ?? 'the list was not worked out yet';
    return `pairlist of ${g.name}: ${r.symbol} is not on it (${why}); what it holds is still managed`;
  }

  /** Whether `r` is a pair off its list: its strategy is called only while it holds something. */
  offList(r: InstanceRunner): boolean {
    const group = r.group;
    if (group === undefined) return false;
    const g = this.groups.get(group);
    return g !== undefined && !g.listed.has(r.symbol);
  }

  /** The pairs each list holds now, best ranked first (the operator's view, `/count`). */
  listed(group: string): readonly string[] | undefined {
    const g = this.groups.get(group);
    return g === undefined ? undefined : [...g.listed];
  }

  private resolve(g: Group, now: number): void {
    const figures = [...g.members.keys()].map((symbol) => {
      const t = this.market.tickers.get(symbol);
      const rules = this.market.rules.get(symbol);
      return {
        symbol,
        quoteAsset: t?.quoteAsset ?? rules?.quoteAsset,
        last: t?.last,
        high: t?.high,
        low: t?.low,
        quoteVolume: t?.quoteVolume,
        tickSize: rules === undefined ? undefined : rules.tickSize.toNumber(),
        changePct: this.changePct(g, symbol, now),
      };
    });
    const result = resolvePairList(g.list, figures);
    const listed = new Set(result.listed.map((p) => p.symbol));
    const added = [...listed].filter((s) => !g.listed.has(s));
    const removed = [...g.listed].filter((s) => !listed.has(s));
    g.listed = listed;
    g.leftOut = new Map(result.left.map((p) => [p.symbol, p.reason] as const));
    for (const s of [...added, ...removed]) g.members.get(s)?.listingChanged();
    const newcomers = this.newcomersLeftOut(g);
    if (added.length === 0 && removed.length === 0 && !newcomers.changed) return;
    const change: PairListChange = { group: g.name, listed: [...listed], added, removed };
    if (Object.keys(newcomers.leftOut).length > 0) change.newLeftOut = newcomers.leftOut;
    this.logger.info(change, pairListChangeText(change));
    this.changed(now, change);
  }

  /**
   * The pairs the exchange listed after the start that `g` (just worked out) does not hold, and why: their rules
   * not read, or the list's filters. `changed` when one of them was not told yet or moved from one to the other,
   * so the list's change is journaled once for each, not at every refresh its figures move. A newcomer on the list
   * is a pair like the others from then on; one not taken up that was not asked about again (gone from the market
   * watch) is forgotten.
   */
  private newcomersLeftOut(g: Group): { changed: boolean; leftOut: Record<string, string> } {
    for (const s of g.asked) if (!g.members.has(s) && !g.newcomers.has(s)) g.newcomers.set(s, 'new');
    const leftOut: Record<string, string> = {};
    let changed = false;
    for (const [symbol, was] of g.newcomers) {
      const unread = g.unread.get(symbol);
      const member = g.members.has(symbol);
      if ((member && g.listed.has(symbol)) || (!member && unread === undefined)) {
        g.newcomers.delete(symbol);
        continue;
      }
      const now = member ? 'off' : 'unread';
      leftOut[symbol] = unread ?? g.leftOut.get(symbol) ?? 'not worked out yet';
      if (now !== was) {
        changed = true;
        g.newcomers.set(symbol, now);
      }
    }
    g.asked.clear();
    g.unread.clear();
    return { changed, leftOut };
  }

  /** The first price of each of the last hours, per pair (only when the list ranks by change). */
  private sample(g: Group, now: number): void {
    if (g.list.sortBy !== 'change') return;
    const hour = Math.floor(now / HOUR_MS);
    if (hour === g.sampledHour) return;
    g.sampledHour = hour;
    for (const symbol of g.members.keys()) {
      const t = this.market.tickers.get(symbol);
      if (t === undefined) continue;
      let ring = g.hourly.get(symbol);
      if (ring === undefined) g.hourly.set(symbol, (ring = new Float64Array(2 * (DAY_HOURS + 1)).fill(NaN)));
      const at = 2 * (hour % (DAY_HOURS + 1));
      ring[at] = t.last;
      ring[at + 1] = hour;
    }
  }

  /** The change in percent from the price sampled 24 hours ago to the last; undefined before a day was watched. */
  private changePct(g: Group, symbol: string, now: number): number | undefined {
    const ring = g.hourly.get(symbol);
    const last = this.market.tickers.get(symbol)?.last;
    if (ring === undefined || last === undefined) return undefined;
    const hour = Math.floor(now / HOUR_MS) - DAY_HOURS;
    const at = 2 * (hour % (DAY_HOURS + 1));
    const then = ring[at] as number;
    return ring[at + 1] !== hour || !(then > 0) ? undefined : ((last - then) / then) * 100;
  }
}
