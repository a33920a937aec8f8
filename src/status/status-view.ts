/**
 * What `bot status` prints: the engine's status report (from the store alone) plus the daemon's own lifecycle
 * events, the last prices and the kill-switch file, as a table for a terminal or as JSON for scripts.
 */
import { existsSync } from 'node:fs';
import { readStatus, type InstanceStatusReport, type StatusReport } from './status-report.js';
import { type Dec, dec } from '../market/decimal.js';
import { instanceGroup } from '../market/instance-names.js';
import { assetPlaces, roundedText, rounder } from '../market/display.js';
import type { PairRules } from '../market/pair-rules.js';
import type { EventRow } from '../store/events.js';
import type { FillRow } from '../store/fills.js';
import type { LastPrice } from '../store/last-prices.js';
import type { OrderRow } from '../store/order-journal.js';
import type { Store } from '../store/store.js';
import { roundedEventData } from './event-figures.js';
import { type GroupTotal, type Holding, holdingOf, type InstanceGroup, instanceGroups } from './instance-groups.js';
import { paperAccountJson, paperAccountLines, paperAccountView, type PaperAccountView } from './paper-account-view.js';

/** How many of the latest operator actions the view carries. */
const RECENT_ACTIONS = 10;

/** External orders listed one per line in the terminal's status (the rest are counted). */
const EXTERNAL_LINES = 20;

export interface DaemonState {
  /** running: started and its process is alive; ended: started, process gone, no clean stop recorded. */
  state: 'running' | 'stopped' | 'ended' | 'never';
  pid: number | undefined;
  mode: string | undefined;
  venue: string | undefined;
  /** Wall-clock time, as every daemon start and stop is recorded. */
  since: number | undefined;
  /** The venue's clock of the last run: the wall's, or the recording's time (paper on recordings). */
  clock: 'wall' | 'data';
}

/**
 * The two times a status speaks: the venue's (what "today", fills and daily limits go by: the recording's time
 * on paper on recordings) and the wall's (when the daemon started or stopped), each labelled where shown.
 */
export interface StatusClock {
  /** The wall clock's time of the reading; undefined when not told (the daily summary). */
  wall: number | undefined;
  /** The venue's time; undefined while a recording's time is not known (no price recorded yet). */
  venue: number | undefined;
  venueClock: 'wall' | 'data';
}

export interface StatusView {
  /** `report.time` is the venue's time when known, else the wall's. */
  report: StatusReport;
  clock: StatusClock;
  daemon: DaemonState;
  prices: LastPrice[];
  killSwitchFile: { path: string; present: boolean };
  /** The embedded simulated exchange's account, when this is a paper database. */
  paper: PaperAccountView | undefined;
  /** Trading stopped by an authentication failure in the running daemon, not cleared since. */
  authHalted: boolean;
  /** Stop-buy (no new BUY orders) as last set, and when and by whom. */
  stopBuy: { on: boolean; last: EventRow | undefined };
  /** The latest operator actions, newest first. */
  recentActions: EventRow[];
  /**
   * Each pair's rules for rounding what is shown: the daemon's engine's, or (another process: `bot status`) as the
   * daemon last stored them.
   */
  rules: RulesOf;
  /** What each instance holds (an open trade, its exposure at the last price), by name. */
  holdings: ReadonlyMap<string, Holding>;
  /** The multi-pair files' instances together, each with its totals. */
  groups: InstanceGroup[];
  /** Paper on recordings: how far the recording's time is behind PAPER_SPEED's pace (undefined otherwise). */
  replay: ReplayLag | undefined;
}

/**
 * How far a paced replay is behind its pace: recorded ms. The daemon's clock's own figure (the control API, the
 * metrics), or (`bot status`) the last the daemon recorded: `replay-behind` when it passed the bound,
 * `replay-caught-up` when back under it.
 */
export interface ReplayLag {
  lagMs: number;
  /** Recorded time per wall time (PAPER_SPEED). */
  speed: number;
  /** Over the bound at which the daemon warns (REPLAY_LAG_WARN_MS of wall time). */
  behind: boolean;
}

/**
 * A paced replay more than this much wall time behind its pace is warned about (a line, a `replay-behind` event,
 * status). Below it the lag is a loaded machine's ordinary jitter at a high PAPER_SPEED (a wake-up, a collection:
 * at 600x a tenth of a second is a recorded minute); above it the run visibly takes longer than asked.
 */
export const REPLAY_LAG_WARN_MS = 5_000;

/** The replay's lag as the daemon last recorded it, while the run that recorded it is running. */
function recordedReplayLag(store: Store, daemon: DaemonState): ReplayLag | undefined {
  if (daemon.state !== 'running' || daemon.clock !== 'data') return undefined;
  const started = store.events.latest(['daemon-started']);
  const last = store.events.latest(['replay-behind', 'replay-caught-up']);
  const speed = typeof last?.data.speed === 'number' ? last.data.speed : 1;
  if (last === undefined || started === undefined || last.id < started.id) return undefined;
  const lagMs = typeof last.data.lagMs === 'number' ? last.data.lagMs : 0;
  return { lagMs, speed, behind: last.kind === 'replay-behind' };
}

/** A pair's rules, or undefined where they are not known (then figures are shown to 8 places). */
export type RulesOf = (symbol: string) => PairRules | undefined;

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function text(event: EventRow | undefined, key: string): string | undefined {
  const v = event?.data[key];
  return typeof v === 'string' ? v : undefined;
}

function daemonState(store: Store, isAlive: (pid: number) => boolean): DaemonState {
  const started = store.events.latest(['daemon-started']);
  if (!started)
    return { state: 'never', pid: undefined, mode: undefined, venue: undefined, since: undefined, clock: 'wall' };
  const pid = typeof started.data.pid === 'number' ? started.data.pid : undefined;
  const clock: DaemonState['clock'] = started.data.clock === 'data' ? 'data' : 'wall';
  const run = { pid, mode: text(started, 'mode'), venue: text(started, 'venue'), clock };
  const last = store.events.latest(['daemon-started', 'daemon-stopped']);
  if (last && last.kind === 'daemon-stopped') return { ...run, state: 'stopped', since: last.time };
  return { ...run, state: pid !== undefined && isAlive(pid) ? 'running' : 'ended', since: started.time };
}

/**
 * The status of the store's run. `now`: the venue's time, from the daemon's clock (the control API);
 * without it (`bot status`, another process) it is the wall's for a run on the wall clock, and for a run on a
 * recording's time the time the daemon last wrote its prices (at most a few seconds of data time behind).
 */
export function buildStatusView(
  store: Store,
  options: {
    wallNow?: number;
    now?: number;
    killSwitchFile: string;
    isAlive?: (pid: number) => boolean;
    /** Each pair's rules; by default as the daemon last stored them. */
    rules?: RulesOf;
    /** The daemon's replay clock's lag and pace, when it runs on one; by default as the daemon last recorded it. */
    replay?: { lagMs: number; speed: number };
  },
): StatusView {
  const prices = store.prices.all();
  const daemon = daemonState(store, options.isAlive ?? pidAlive);
  const venue = options.now ?? (daemon.clock === 'data' ? store.prices.lastWritten() : options.wallNow);
  const clock: StatusClock = { wall: options.wallNow, venue, venueClock: daemon.clock };
  const report = readStatus(store, {
    now: venue ?? options.wallNow ?? 0,
    prices: new Map(prices.map((p) => [p.symbol, p.price])),
  });
  if (daemon.state !== 'running') {
    // The last lifecycle event of an instance whose daemon died says "running": it is not.
    for (const i of report.instances)
      if (i.state === 'running') {
        i.state = 'stopped';
        i.reason = 'the daemon ended without a clean stop';
      }
  }
  const rules: RulesOf = options.rules ?? ((symbol) => store.pairRules.get(symbol));
  // Each asset's places in the pairs traded (an instance's, or one with a price), for the paper balances.
  const traded = new Set([...prices.map((p) => p.symbol), ...report.instances.flatMap((i) => i.symbols)]);
  const places = assetPlaces([...traded].map(rules));
  const lastPrice = new Map(prices.map((p) => [p.symbol, dec(p.price)]));
  const holdings = new Map(
    report.instances.map((i) => {
      const symbol = i.symbols.length === 1 ? (i.symbols[0] as string) : undefined;
      const priced = symbol === undefined ? undefined : lastPrice.get(symbol);
      return [i.instance, holdingOf(i, symbol === undefined ? undefined : rules(symbol), priced)] as const;
    }),
  );
  return {
    report,
    clock,
    daemon,
    prices,
    killSwitchFile: { path: options.killSwitchFile, present: existsSync(options.killSwitchFile) },
    paper: paperAccountView(store, store.events.count('daemon-started'), places),
    authHalted: authHalted(store, report.authFailure, daemon),
    stopBuy: stopBuyState(store),
    recentActions: store.events.list({ kinds: ['operator'], limit: RECENT_ACTIONS }),
    rules,
    holdings,
    groups: instanceGroups(report.instances, holdings, rules),
    replay:
      options.replay === undefined
        ? recordedReplayLag(store, daemon)
        : { ...options.replay, behind: options.replay.lagMs / options.replay.speed > REPLAY_LAG_WARN_MS },
  };
}

/** How an instance's figures are rounded for people: its pair's precision when it trades one known pair. */
export function instanceRounder(i: Pick<InstanceStatusReport, 'symbols'>, rules: RulesOf) {
  return rounder(i.symbols.length === 1 ? rules(i.symbols[0] as string) : undefined);
}

function stopBuyState(store: Store): StatusView['stopBuy'] {
  const last = store.events.latest(['stop-buy']);
  return { on: last?.data.on === true, last };
}

/** A failure of this run that no later `auth-cleared` lifted (a restart clears it too). */
function authHalted(store: Store, failure: EventRow | undefined, daemon: DaemonState): boolean {
  if (failure === undefined || daemon.state !== 'running') return false;
  if (daemon.since !== undefined && failure.time < daemon.since) return false;
  const cleared = store.events.latest(['auth-cleared']);
  return cleared === undefined || cleared.id < failure.id;
}

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());

/** An order as the JSON of status and the control API shows it. */
export function orderJson(o: OrderRow) {
  return {
    localId: o.localId,
    instance: o.instance ?? null,
    exchangeId: o.exchangeId ?? null,
    symbol: o.symbol,
    side: o.side,
    type: o.type,
    status: o.status,
    price: o.price ?? null,
    stopPrice: o.stopPrice ?? null,
    limitPrice: o.limitPrice ?? null,
    quantity: o.quantity ?? null,
    quoteAmount: o.quoteAmount ?? null,
    filled: o.filledQty,
    tag: o.tag ?? null,
    createdAt: iso(o.createdAt),
  };
}

function instanceJson(i: InstanceStatusReport, view: Pick<StatusView, 'rules' | 'holdings'>) {
  const r = instanceRounder(i, view.rules);
  const held = view.holdings.get(i.instance);
  return {
    instance: i.instance,
    group: instanceGroup(i.instance)?.group ?? null,
    state: i.state,
    reason: i.reason ?? null,
    since: iso(i.since),
    symbols: i.symbols,
    openOrders: i.openOrders.map(orderJson),
    todaysFills: i.todaysFills.map((f) => fillJson(f, view.rules(f.symbol))),
    position: { quantity: r.baseAsset(i.position.quantity), averagePrice: r.price(i.position.averagePrice) },
    openTrade: held?.open ?? false,
    exposure: held?.exposure === undefined ? null : r.quote(held.exposure),
    realisedPnl: r.quote(i.realisedPnl),
    realisedToday: r.quote(i.realisedToday),
    unrealisedPnl: i.unrealisedPnl === undefined ? null : r.quote(i.unrealisedPnl),
    protections: i.protections.map((p) => ({ protection: p.protection, reason: p.reason, until: iso(p.until) })),
  };
}

/**
 * How the control API gives figures: rounded to the pair's precision for people ('pair'), or as the journal holds
 * them ('full', for scripts: accounting, exports).
 */
export const API_PRECISIONS = ['pair', 'full'] as const;
export type ApiPrecision = (typeof API_PRECISIONS)[number];

/**
 * A fill as the JSON of status and the control API shows it, rounded to its pair's precision when known; 'full'
 * gives the journal's digits.
 */
export function fillJson(f: FillRow, rules: PairRules | undefined, precision: ApiPrecision = 'pair') {
  const r = rounder(rules);
  const full = precision === 'full';
  return {
    fillKey: f.fillKey,
    orderLocalId: f.orderLocalId,
    instance: f.instance ?? null,
    symbol: f.symbol,
    side: f.side,
    price: full ? f.price : r.price(f.price),
    quantity: full ? f.qty : r.baseAsset(f.qty),
    fee: full ? f.fee : r.amount(f.fee, f.feeIn),
    feeAsset: f.feeAsset ?? null,
    time: iso(f.time),
  };
}

/** A group's total in `t`'s quote asset, to the places of that asset in the group's pairs. */
export function totalRounder(g: InstanceGroup, t: GroupTotal, rules: RulesOf): (d: Dec) => string {
  const places = assetPlaces(g.instances.flatMap((i) => i.symbols).map(rules)).get(t.quoteAsset);
  return (d) => roundedText(d, places);
}

/** A group as JSON: its instances by name and its totals. */
function groupJson(g: InstanceGroup, rules: RulesOf) {
  return {
    name: g.name,
    instances: g.instances.map((i) => i.instance),
    totals: g.totals.map((t) => {
      const q = totalRounder(g, t, rules);
      return {
        quoteAsset: t.quoteAsset,
        pairs: t.pairs,
        running: t.running,
        openTrades: t.openTrades,
        openOrders: t.openOrders,
        fillsToday: t.fillsToday,
        exposure: t.exposure === undefined ? null : q(t.exposure),
        realisedPnl: q(t.realisedPnl),
        realisedToday: q(t.realisedToday),
        unrealisedPnl: q(t.unrealisedPnl),
      };
    }),
  };
}

function eventJson(e: EventRow | undefined) {
  return e === undefined ? null : { time: iso(e.time), ...e.data };
}

/**
 * An event row as JSON (the control API's event list, the operator actions in status), its figures rounded for
 * people to the pair's precision (event-figures.ts).
 */
export function eventRowJson(e: EventRow, rules: RulesOf) {
  const data = roundedEventData(e.kind, e.data, rules);
  return { id: e.id, time: iso(e.time), instance: e.instance ?? null, kind: e.kind, data };
}

/** The view as plain JSON: decimals as plain text rounded for people (the pair's precision), times as ISO 8601. */
export function statusJson(view: StatusView) {
  const { report, daemon } = view;
  return {
    time: iso(report.time),
    clock: { wall: iso(view.clock.wall), venue: iso(view.clock.venue), venueClock: view.clock.venueClock },
    daemon: { ...daemon, since: iso(daemon.since) },
    instances: report.instances.map((i) => instanceJson(i, view)),
    groups: view.groups.map((g) => groupJson(g, view.rules)),
    externalOrders: report.externalOrders.map(orderJson),
    foreignOrders: foreignOrdersJson(report.foreignOrders),
    lastPrices: view.prices.map((p) => ({ symbol: p.symbol, price: p.price, time: iso(p.time) })),
    killSwitch: {
      /** The file's present state: the switch itself. */
      on: view.killSwitchFile.present,
      file: view.killSwitchFile.path,
      filePresent: view.killSwitchFile.present,
      last: eventJson(report.killSwitch),
    },
    stopBuy: { on: view.stopBuy.on, last: eventJson(view.stopBuy.last) },
    circuitBreaker: eventJson(report.circuitBreaker),
    authFailure: eventJson(report.authFailure),
    paper: view.paper === undefined ? null : paperAccountJson(view.paper),
    authHalted: view.authHalted,
    recentActions: view.recentActions.map((e) => eventRowJson(e, view.rules)),
    replay:
      view.replay === undefined
        ? null
        : {
            lagSeconds: view.replay.lagMs / 1000,
            wallLagSeconds: view.replay.lagMs / view.replay.speed / 1000,
            behind: view.replay.behind,
          },
  };
}

const count = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** The last count of orders another owner has open, while it says some are (else null). */
function foreignOrdersJson(e: EventRow | undefined) {
  const line = foreignOrdersLine(e);
  if (e === undefined || line === undefined) return null;
  const symbols = typeof e.data.symbols === 'object' && e.data.symbols !== null ? e.data.symbols : {};
  return {
    warning: line,
    total: count(e.data.total),
    symbols,
    journaled: count(e.data.journaled),
    untracked: count(e.data.untracked),
    time: iso(e.time),
  };
}

/** `another bot may be trading this account: ...` while the last count says orders of another owner are open. */
function foreignOrdersLine(e: EventRow | undefined): string | undefined {
  const total = count(e?.data.total);
  if (e === undefined || total === 0) return undefined;
  const symbols = typeof e.data.symbols === 'object' && e.data.symbols !== null ? Object.entries(e.data.symbols) : [];
  const listed = symbols.map(([symbol, n]) => `${symbol} ${count(n)}`).join(', ');
  const untracked = count(e.data.untracked);
  return (
    `ANOTHER BOT MAY BE TRADING THIS ACCOUNT: ${total} open order(s) not placed by this bot (${listed}) at ` +
    `${short(e.time)}; ${count(e.data.journaled)} journaled as external` +
    (untracked > 0 ? `, ${untracked} not followed` : '')
  );
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, c) => cell.padEnd(widths[c] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

const short = (ms: number | undefined): string =>
  ms === undefined ? '-' : new Date(ms).toISOString().replace('T', ' ').slice(0, 19);

/**
 * The kill switch, stop-buy, circuit breaker and authentication, one line each (as `bot status` prints them),
 * and a warning while orders another owner placed are open on the account.
 */
export function guardLines(view: StatusView): string[] {
  const { report } = view;
  const file = view.killSwitchFile.present ? ` (file ${view.killSwitchFile.path} present)` : '';
  const breaker = report.circuitBreaker;
  const until = typeof breaker?.data.until === 'number' ? breaker.data.until : undefined;
  const breakerText =
    breaker?.data.state === 'open'
      ? `open until ${short(until)}${until !== undefined && until < report.time ? ' (expired)' : ''}`
      : 'closed';
  const lastStart = view.daemon.state === 'never' ? undefined : view.daemon.since;
  const auth = report.authFailure;
  const authText =
    auth === undefined
      ? 'ok'
      : view.authHalted
        ? `FAILED at ${short(auth.time)}: ${text(auth, 'message') ?? ''} (trading halted: fix the keys or clock, then kill -USR2 the daemon, clear it through the control API, or restart)`
        : `ok (last failure ${short(auth.time)}, ${lastStart !== undefined && auth.time < lastStart ? 'before the last start' : 'cleared or the daemon is not running'})`;
  const foreign = foreignOrdersLine(report.foreignOrders);
  return [
    // The file is the switch: its present state, not the last event (which may be from before it was removed).
    `kill switch: ${view.killSwitchFile.present ? 'ON' : 'off'}${file}`,
    `stop-buy: ${view.stopBuy.on ? 'ON (no new BUY orders; exits still go out)' : 'off'}`,
    `circuit breaker: ${breakerText}`,
    `authentication: ${authText}`,
    ...(foreign === undefined ? [] : [foreign]),
  ];
}

/**
 * The status table's rows: one per instance, and after a multi-pair file's last pair its total (one per quote
 * asset): how many pairs run, how many hold a trade, and the figures added up.
 */
function instanceRows(view: StatusView): string[][] {
  const lastOf = new Map(view.groups.map((g) => [g.instances[g.instances.length - 1]?.instance, g]));
  return view.report.instances.flatMap((i) => {
    const r = instanceRounder(i, view.rules);
    const exposure = view.holdings.get(i.instance)?.exposure;
    const row = [
      i.instance,
      i.state,
      String(i.openOrders.length),
      String(i.todaysFills.length),
      r.baseAsset(i.position.quantity),
      r.price(i.position.averagePrice),
      exposure === undefined ? '-' : r.quote(exposure),
      r.quote(i.realisedPnl),
      r.quote(i.realisedToday),
      i.unrealisedPnl === undefined ? '-' : r.quote(i.unrealisedPnl),
    ];
    const group = lastOf.get(i.instance);
    return group === undefined ? [row] : [row, ...group.totals.map((t) => totalRow(group, t, view.rules))];
  });
}

function totalRow(group: InstanceGroup, t: GroupTotal, rules: RulesOf): string[] {
  const rounded = totalRounder(group, t, rules);
  const q = (d: Dec) => `${rounded(d)} ${t.quoteAsset}`;
  return [
    `${group.name} total`,
    `${t.running}/${t.pairs} running`,
    String(t.openOrders),
    String(t.fillsToday),
    `${t.openTrades} held`,
    '-',
    t.exposure === undefined ? '-' : q(t.exposure),
    q(t.realisedPnl),
    q(t.realisedToday),
    q(t.unrealisedPnl),
  ];
}

function orderText(o: OrderRow): string {
  const price =
    o.type === 'OCO'
      ? `${o.price ?? '?'} / stop ${o.stopPrice ?? '?'} limit ${o.limitPrice ?? '?'}`
      : o.stopPrice !== undefined
        ? `stop ${o.stopPrice} limit ${o.price ?? o.limitPrice ?? '?'}`
        : (o.price ?? 'market');
  const qty = o.quantity ?? `${o.quoteAmount ?? '?'} quote`;
  return `${o.type} ${o.side} ${qty} @ ${price}  ${o.status}  filled ${o.filledQty}${o.tag ? `  [${o.tag}]` : ''}`;
}

function actionText(e: EventRow): string {
  const d = e.data;
  const what = [d.action, d.instance ?? d.order ?? (d.on === undefined ? undefined : d.on ? 'on' : 'off')]
    .filter((x) => typeof x === 'string')
    .join(' ');
  const outcome = typeof d.outcome === 'string' ? d.outcome : '';
  const source = typeof d.source === 'string' ? ` from ${d.source}` : '';
  return `${what}: ${outcome}${source}`;
}

/** When a status was read, both clocks labelled: "venue … UTC (the recording's time) · wall … UTC". */
export function clockLine(clock: StatusClock): string {
  const wall = clock.wall === undefined ? '' : `${short(clock.wall)} UTC`;
  if (clock.venueClock === 'wall') return `${wall} (wall clock; the venue's time is the wall's)`;
  const venue =
    clock.venue === undefined
      ? "venue: the recording's time is not known yet (no price recorded)"
      : `venue ${short(clock.venue)} UTC (the recording's time)`;
  return `${venue}${wall === '' ? '' : ` · wall ${wall}`}`;
}

/** A paced replay's lag, for people. */
export function replayLine({ lagMs, speed, behind }: ReplayLag): string {
  if (lagMs < 1000) return `replay: on PAPER_SPEED's pace (${speed}x)`;
  const wall = (lagMs / speed / 1000).toFixed(1);
  return (
    `replay: ${behind ? 'BEHIND ' : ''}${(lagMs / 1000).toFixed(0)} s of recorded time (${wall} s of wall) behind ` +
    `PAPER_SPEED's pace (${speed}x): the recording's clock waits for the daemon, nothing is skipped`
  );
}

/** The view as lines for a terminal. */
export function statusTable(view: StatusView): string {
  const { report, daemon } = view;
  const daemonText = {
    running: `running (pid ${daemon.pid}, ${daemon.mode ?? '?'} on ${daemon.venue ?? '?'}) since ${short(daemon.since)} UTC (wall)`,
    stopped: `stopped at ${short(daemon.since)} UTC (wall)`,
    ended: `not running: the run started ${short(daemon.since)} UTC (wall) ended without a clean stop`,
    never: 'never started on this database',
  }[daemon.state];
  const out = [`status at ${clockLine(view.clock)}`, `daemon: ${daemonText}`, ...guardLines(view)];
  if (view.replay !== undefined) out.push(replayLine(view.replay));
  if (view.paper !== undefined) out.push(...paperAccountLines(view.paper, short));
  out.push('');
  if (report.instances.length === 0) out.push('no instances recorded yet');
  else {
    out.push(
      ...table(
        [
          'INSTANCE',
          'STATE',
          'OPEN',
          'FILLS TODAY',
          'POSITION',
          'AVG PRICE',
          'EXPOSURE',
          'REALISED',
          'TODAY',
          'UNREALISED',
        ],
        instanceRows(view),
      ),
    );
    for (const i of report.instances) {
      if (i.reason !== undefined) out.push(`  ${i.instance}: ${i.state}: ${i.reason}`);
      for (const p of i.protections)
        out.push(`  ${i.instance}: no new entries until ${short(p.until)} UTC: ${p.reason}`);
      for (const o of i.openOrders) out.push(`  ${i.instance}: ${orderText(o)}`);
    }
  }
  for (const o of report.externalOrders.slice(0, EXTERNAL_LINES)) out.push(`  (external): ${orderText(o)}`);
  if (report.externalOrders.length > EXTERNAL_LINES)
    out.push(`  (external): ${report.externalOrders.length - EXTERNAL_LINES} more (bot status --json lists them all)`);
  if (view.recentActions.length > 0) {
    out.push('', 'operator actions (latest first):');
    for (const a of view.recentActions) out.push(`  ${short(a.time)}  ${actionText(a)}`);
  }
  if (view.prices.length > 0)
    out.push('', `last prices: ${view.prices.map((p) => `${p.symbol} ${p.price} (${short(p.time)})`).join(', ')}`);
  return out.join('\n');
}
