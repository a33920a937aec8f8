/**
 * A multi-pair strategy file's instances shown together (issue 41): a row per pair and one total per quote asset
 * (figures are never summed across quotes). What a pair holds is counted as its portfolio limits count it
 * (engine/portfolio.ts): its position above dust and its working buys, at the last price; a pair holding either
 * has an open trade. `bot status`, the API, the page, the chat and the metrics all read these.
 */
import { type Dec, ZERO } from '../market/decimal.js';
import { instanceGroup } from '../market/instance-names.js';
import type { PairRules } from '../market/pair-rules.js';
import { remainingBase } from '../store/order-journal.js';
import type { InstanceStatusReport } from './status-report.js';

/** What one instance holds: a trade open (a position above dust or a working buy), and its value in quote. */
export interface Holding {
  open: boolean;
  /** Position and working buys at the last price (0 when it holds neither); undefined without a price. */
  exposure: Dec | undefined;
}

/** A group's figures in one quote asset: its pairs added up. */
export interface GroupTotal {
  quoteAsset: string;
  pairs: number;
  running: number;
  /** Pairs holding a trade (a position above dust or a working buy). */
  openTrades: number;
  openOrders: number;
  fillsToday: number;
  /** Undefined when a pair that holds something has no last price. */
  exposure: Dec | undefined;
  realisedPnl: Dec;
  realisedToday: Dec;
  unrealisedPnl: Dec;
}

export interface InstanceGroup {
  /** The strategy file's name. */
  name: string;
  /** Its instances, in the report's order. */
  instances: InstanceStatusReport[];
  totals: GroupTotal[];
}

/** What `i` holds at `price` (its pair's last), its dust left out with the pair's step. */
export function holdingOf(i: InstanceStatusReport, rules: PairRules | undefined, price: Dec | undefined): Holding {
  // An instance of several pairs (a journal from before multi-pair files) has no one price to value it at.
  if (i.symbols.length > 1) return { open: false, exposure: undefined };
  let position = i.position.quantity;
  if (!position.gt(0) || (rules !== undefined && position.lt(rules.stepSize))) position = ZERO;
  let buying = ZERO;
  for (const o of i.openOrders) if (o.side === 'BUY') buying = buying.plus(remainingBase(o, price));
  const base = position.plus(buying);
  return { open: base.gt(0), exposure: price === undefined ? (base.gt(0) ? undefined : ZERO) : base.mul(price) };
}

/**
 * The groups among `instances` (those named `<file>/<SYMBOL>`), in the order their first instance comes; each
 * with a total per quote asset (a pair without known rules is counted under '?').
 */
export function instanceGroups(
  instances: readonly InstanceStatusReport[],
  holdings: ReadonlyMap<string, Holding>,
  rules: (symbol: string) => PairRules | undefined,
): InstanceGroup[] {
  const groups = new Map<string, InstanceStatusReport[]>();
  for (const i of instances) {
    const name = instanceGroup(i.instance)?.group;
    if (name === undefined) continue;
    const members = groups.get(name);
    if (members) members.push(i);
    else groups.set(name, [i]);
  }
  return [...groups].map(([name, members]) => {
    const totals = new Map<string, GroupTotal>();
    for (const i of members) {
      const symbol = i.symbols[0] ?? instanceGroup(i.instance)?.symbol;
      const quoteAsset = (symbol === undefined ? undefined : rules(symbol)?.quoteAsset) ?? '?';
      const t = totals.get(quoteAsset) ?? emptyTotal(quoteAsset);
      const held = holdings.get(i.instance);
      t.pairs++;
      if (i.state === 'running') t.running++;
      if (held?.open === true) t.openTrades++;
      t.openOrders += i.openOrders.length;
      t.fillsToday += i.todaysFills.length;
      t.exposure =
        t.exposure === undefined || held?.exposure === undefined ? undefined : t.exposure.plus(held.exposure);
      t.realisedPnl = t.realisedPnl.plus(i.realisedPnl);
      t.realisedToday = t.realisedToday.plus(i.realisedToday);
      t.unrealisedPnl = t.unrealisedPnl.plus(i.unrealisedPnl ?? ZERO);
      totals.set(quoteAsset, t);
    }
    return {
      name,
      instances: members,
      totals: [...totals.values()].sort((a, b) => a.quoteAsset.localeCompare(b.quoteAsset)),
    };
  });
}

function emptyTotal(quoteAsset: string): GroupTotal {
  return {
    quoteAsset,
    pairs: 0,
    running: 0,
    openTrades: 0,
    openOrders: 0,
    fillsToday: 0,
    exposure: ZERO,
    realisedPnl: ZERO,
    realisedToday: ZERO,
    unrealisedPnl: ZERO,
  };
}
