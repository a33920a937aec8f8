/**
 * The one place that knows which happenings the notifier reports, how urgent each is and how it reads on a
 * phone: every kind of the events table's union (store/events.ts), plus `fill` (from the fills table). The
 * table must cover the union: a kind added there does not compile until it has its line here. A row of a
 * kind this build does not know (written by a newer one) is still reported, at info, with its data in brief.
 */
import { pausedByOperator } from '../operator/actions.js';
import type { EventKind } from '../store/events.js';
import { pairListChangeText } from '../config/pair-list.js';

export const LEVELS = ['info', 'warn', 'error'] as const;
export type Level = (typeof LEVELS)[number];

export const levelRank = (level: Level): number => LEVELS.indexOf(level);

/** The notifier's own records: never reported (they would report themselves). */
type OwnKind = 'notification-sent' | 'notification-dropped';
/** What a channel can be given (`TELEGRAM_EVENTS=fill,paused`). */
export type NoticeKind = Exclude<EventKind, OwnKind> | 'fill';

/** One thing to tell: an event row or a fill, as the notifier saw it. */
export interface Notice {
  /** `event` rows and `fill` rows have separate id sequences. */
  source: 'event' | 'fill';
  id: number;
  /**
   * The notification's stable id (`noticeKey`): the same every time this row is told, across restarts, and
   * never another row's, in this database or another. What a receiver drops repeats by.
   */
  key: string;
  /** A NoticeKind, or a kind this build does not know. */
  kind: string;
  instance: string | undefined;
  time: number;
  data: Record<string, unknown>;
}

/** `<journal>-e<event id>` or `<journal>-f<fill seq>`; `journal` names the database (Store.createdAt, base 36). */
export function noticeKey(journal: string, source: Notice['source'], id: number): string {
  return `${journal}-${source === 'event' ? 'e' : 'f'}${id}`;
}

type Data = Record<string, unknown>;

const str = (v: unknown): string => {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return '';
};

/** An ISO time, shortened to what a phone needs: `HH:MM:SS UTC` (with the date when not today is unclear). */
const clockTime = (ms: unknown): string =>
  typeof ms === 'number' ? `${new Date(ms).toISOString().slice(11, 19)} UTC` : '';

/** A time with its date, for a happening told when it may no longer hold: `2023-03-06 10:04:05 UTC`. */
const dateTime = (ms: number): string => `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`;

const joined = (...parts: string[]): string => parts.filter((p) => p !== '').join(' ');

interface KindSpec {
  level: Level | ((data: Data) => Level);
  /** One line, without the instance (the composer puts it first); `time` is when it was recorded. */
  line: (data: Data, time: number) => string;
}

function fillLine(d: Data): string {
  const fee = str(d.fee) !== '' && str(d.fee) !== '0' ? `fee ${str(d.fee)} ${str(d.feeAsset)}`.trim() : '';
  const pnl = str(d.pnl) !== '' ? `PnL ${str(d.pnl).startsWith('-') ? '' : '+'}${str(d.pnl)}` : '';
  return joined(str(d.symbol), str(d.side), str(d.type), str(d.qty), '@', str(d.price), fee, pnl);
}

function summaryLines(d: Data): string {
  const rows = Array.isArray(d.instances) ? (d.instances as Data[]) : [];
  const lines = rows.map((i) => {
    const fees = typeof i.fees === 'object' && i.fees !== null ? Object.entries(i.fees as Data) : [];
    const feeText = fees.map(([asset, v]) => `${str(v)} ${asset}`).join(', ');
    const pos = i.position as Data | undefined;
    return joined(
      `${str(i.instance)}:`,
      `PnL ${str(i.realisedToday)}`,
      str(i.unrealisedPnl) !== '' ? `(open ${str(i.unrealisedPnl)})` : '',
      `· ${str(i.fills)} fills`,
      feeText !== '' ? `fees ${feeText}` : '',
      `· ${str(i.openOrders)} open`,
      pos !== undefined ? `· pos ${str(pos.quantity)} @ ${str(pos.averagePrice)}` : '',
    );
  });
  return [`daily summary ${str(d.day)}${rows.length === 0 ? ': no instances' : ''}`, ...lines].join('\n');
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const obj = (v: unknown): Data => (typeof v === 'object' && v !== null ? (v as Data) : {});
const mins = (v: unknown) => `${str(v)} min`;

/**
 * Declared exits and protections in words (a reload's notice): `stop-loss 2 % (limit 0.5 % under), roi 2 % at
 * once, 1 % after 60 min; cooldown 30 min`. None declared reads `none`.
 */
export function declaredText(exits: unknown, protections: unknown): string {
  const e = obj(exits);
  const p = obj(protections);
  const parts: string[] = [];
  if (num(e.stopLossPct) !== undefined)
    parts.push(
      `stop-loss ${str(e.stopLossPct)} %${num(e.stopLimitPct) === undefined ? '' : ` (limit ${str(e.stopLimitPct)} % under)`}`,
    );
  if (num(e.trailingStopPct) !== undefined)
    parts.push(
      `trailing stop ${str(e.trailingStopPct)} %${num(e.trailingActivationPct) === undefined ? '' : ` from +${str(e.trailingActivationPct)} %`}`,
    );
  const roi = Object.entries(obj(e.roi))
    .filter(([minutes, pct]) => /^\d+$/.test(minutes) && num(pct) !== undefined)
    .sort(([a], [b]) => Number(a) - Number(b))
    .map(([minutes, pct]) => `${str(pct)} % ${minutes === '0' ? 'at once' : `after ${mins(minutes)}`}`);
  if (roi.length > 0) parts.push(`roi ${roi.join(', ')}`);
  const guards: string[] = [];
  if (num(p.cooldownMinutes) !== undefined) guards.push(`cooldown ${mins(p.cooldownMinutes)}`);
  const losing = obj(p.losingTrades);
  if (num(losing.count) !== undefined)
    guards.push(
      `${str(losing.count)} losing trades in ${mins(losing.windowMinutes)} pause ${mins(losing.pauseMinutes)}`,
    );
  const drawdown = obj(p.maxDrawdown);
  if (num(drawdown.pct) !== undefined)
    guards.push(
      `drawdown ${str(drawdown.pct)} %${num(drawdown.windowMinutes) === undefined ? '' : ` in ${mins(drawdown.windowMinutes)}`} pauses ${mins(drawdown.pauseMinutes)}`,
    );
  return `exits: ${parts.join(', ') || 'none'}; protections: ${guards.join(', ') || 'none'}`;
}

const KINDS: Record<NoticeKind, KindSpec> = {
  fill: { level: 'info', line: fillLine },
  'order-rejected': { level: 'warn', line: (d) => `order rejected: ${joined(str(d.code), str(d.message))}` },
  'order-not-sent': { level: 'warn', line: (d) => `order not sent: ${str(d.message)}` },
  'order-unknown': {
    level: 'warn',
    line: (d) => `order ${str(d.localId)} outcome unknown (reconciling): ${str(d.reason) || str(d.message)}`,
  },
  'order-missing': { level: 'warn', line: (d) => `order ${str(d.localId)} missing on the exchange` },
  'not-placed': { level: 'info', line: (d) => `order ${str(d.localId)} was not placed: ${str(d.reason)}` },
  reconciled: { level: 'info', line: (d) => `order ${str(d.localId)} reconciled: ${str(d.status)}` },
  'cancel-failed': { level: 'warn', line: (d) => `cancel of ${str(d.localId)} failed: ${str(d.message)}` },
  adopted: {
    level: 'warn',
    line: (d) => `external order adopted: ${joined(str(d.symbol), str(d.side), str(d.type), str(d.quantity))}`,
  },
  'external-orders': {
    level: (d) => (d.total === 0 ? 'info' : 'warn'),
    line: (d) => {
      if (d.total === 0) return 'no open orders of another owner left on the account';
      const symbols = typeof d.symbols === 'object' && d.symbols !== null ? Object.entries(d.symbols as Data) : [];
      const listed = symbols.map(([symbol, n]) => `${symbol} ${str(n)}`).join(', ');
      return `ANOTHER BOT MAY BE TRADING THIS ACCOUNT: ${str(d.total)} open order(s) not placed by this bot (${listed})`;
    },
  },
  // Said when: a refusal told late (a channel's outage, a grouped burst) is not read as the present state (a kill
  // switch turned off since).
  refused: {
    level: 'warn',
    line: (d, time) =>
      `order refused at ${dateTime(time)}: ${str(d.reason)}${typeof d.repeatsOfPrevious === 'number' ? ` (previous reason ×${d.repeatsOfPrevious + 1})` : ''}`,
  },
  // An operator's pause, or an exit's own, is deliberate: told, not alarmed about.
  paused: {
    level: (d) => (d.by === 'operator' || pausedByOperator(str(d.reason)) ? 'warn' : 'error'),
    line: (d) => `PAUSED: ${str(d.reason)}`,
  },
  'start-refused': { level: 'error', line: (d) => `NOT STARTED: ${str(d.reason)}` },
  'engine-error': { level: 'error', line: (d) => `engine error: ${str(d.error)}` },
  'daily-loss-halt': { level: 'error', line: (d) => `daily loss limit: ${str(d.reason)}` },
  started: { level: 'info', line: (d) => `started: ${joined(str(d.strategy), 'on', str(d.symbol))}` },
  resumed: { level: 'info', line: () => 'resumed' },
  stopped: { level: 'info', line: (d) => `stopped${str(d.pausedReason) !== '' ? ' (was paused)' : ''}` },
  operator: {
    level: (d) => (d.outcome === 'failed' ? 'warn' : 'info'),
    line: (d) =>
      joined(
        `operator ${str(d.action)}`,
        str(d.instance),
        str(d.order),
        typeof d.on === 'boolean' ? (d.on ? 'on' : 'off') : '',
        `→ ${str(d.outcome)}`,
        typeof d.error === 'object' && d.error !== null ? str((d.error as Data).message) : '',
        `(${str(d.source)})`,
      ),
  },
  'auth-cleared': { level: 'info', line: () => 'authentication works again: trading resumes' },
  'kill-switch': {
    level: (d) => (d.on === true ? 'warn' : 'info'),
    line: (d) => (d.on === true ? 'KILL SWITCH ON: no new orders' : 'kill switch off: orders allowed again'),
  },
  'stop-buy': {
    level: (d) => (d.on === true ? 'warn' : 'info'),
    line: (d) =>
      d.on === true ? 'STOP-BUY ON: no new BUY orders (exits still go out)' : 'stop-buy off: BUY orders allowed again',
  },
  'exit-triggered': {
    level: (d) => (d.reason === 'roi' ? 'info' : 'warn'),
    line: (d) => joined('EXIT', str(d.reason), `at ${str(d.price)}`, `(level ${str(d.level)}, entry ${str(d.entry)})`),
  },
  'exit-held': {
    level: 'info',
    line: (d) =>
      joined(
        'stop held on the exchange:',
        str(d.type),
        str(d.quantity),
        `stop ${str(d.stopPrice)}`,
        `limit ${str(d.limitPrice)}`,
        d.takeProfit !== null && d.takeProfit !== undefined ? `take-profit ${str(d.takeProfit)}` : '',
      ),
  },
  'held-exit-filled': {
    level: (d) => (d.reason === 'roi' ? 'info' : 'warn'),
    line: (d) =>
      joined('EXIT', str(d.reason), 'filled on the exchange', `at ${str(d.price)}`, `(entry ${str(d.entry)})`),
  },
  'protection-tripped': {
    level: 'warn',
    line: (d) => `PROTECTION ${str(d.protection)}: ${str(d.reason)}; no new entries until ${clockTime(d.until)}`,
  },
  'protection-lifted': {
    level: 'info',
    line: (d) => `protection ${str(d.protection)} lifted: entries allowed again`,
  },
  'pairlist-changed': {
    level: 'info',
    line: (d) => {
      const names = (v: unknown): string[] => (Array.isArray(v) ? v.map(str) : []);
      return pairListChangeText({
        group: str(d.group),
        listed: names(d.listed),
        added: names(d.added),
        removed: names(d.removed),
        newLeftOut:
          typeof d.newLeftOut === 'object' && d.newLeftOut !== null
            ? Object.fromEntries(Object.entries(d.newLeftOut).map(([s, why]) => [s, str(why)]))
            : undefined,
      });
    },
  },
  'exits-changed': {
    level: 'warn',
    line: (d) => `exits and protections reloaded: ${declaredText(d.exits, d.protections)}`,
  },
  'exit-requested': {
    level: 'warn',
    line: (d) =>
      joined('EXIT requested:', str(d.type), str(d.price) !== '' ? `at ${str(d.price)}` : '', `(${str(d.source)})`),
  },
  'circuit-breaker': {
    level: (d) => (d.state === 'open' ? 'error' : 'info'),
    line: (d) => {
      if (d.state !== 'open') return 'circuit breaker closed: trading resumes';
      const last = (d.lastError ?? {}) as Data;
      return `CIRCUIT BREAKER OPEN until ${clockTime(d.until)}: ${str(last.message)}`;
    },
  },
  'auth-failed': {
    level: 'error',
    line: (d) => `AUTHENTICATION FAILED on ${str(d.call)}: ${str(d.message)}. Trading stopped.`,
  },
  'journal-lost': {
    level: 'error',
    line: (d) => `JOURNAL LOST: ${str(d.reason)}. Trading stopped: restore the database and restart.`,
  },
  'journal-recovered': {
    level: 'warn',
    line: (d) => `journal writes work again (failing since ${clockTime(d.since)}): orders reconciled, trading resumes`,
  },
  'daemon-started': { level: 'info', line: (d) => `daemon started (${joined(str(d.mode), str(d.venue))})` },
  'daemon-stopped': {
    level: (d) => (str(d.reason).startsWith('start failed') ? 'error' : 'warn'),
    line: (d) => `daemon stopped: ${str(d.reason)}`,
  },
  'replay-behind': {
    level: 'warn',
    line: (d) =>
      `paper replay behind PAPER_SPEED's pace by ${str(d.wallSeconds)} s of wall time: the recording's clock waits for the daemon`,
  },
  'replay-caught-up': { level: 'info', line: () => "paper replay back on PAPER_SPEED's pace" },
  'daily-summary': { level: 'info', line: summaryLines },
};

/** Kinds a channel can be given: every kind above. */
export const NOTICE_KINDS = Object.keys(KINDS) as readonly NoticeKind[];

export function isNoticeKind(kind: string): kind is NoticeKind {
  return Object.hasOwn(KINDS, kind);
}

const OWN: ReadonlySet<string> = new Set<OwnKind>(['notification-sent', 'notification-dropped']);

export function isReported(kind: string): boolean {
  return !OWN.has(kind);
}

const specOf = (kind: string): KindSpec | undefined => (isNoticeKind(kind) ? KINDS[kind] : undefined);

export function levelOf(n: Notice): Level {
  const spec = specOf(n.kind);
  if (spec === undefined) return 'info';
  return typeof spec.level === 'function' ? spec.level(n.data) : spec.level;
}

const BRIEF = 160;

/** The notice as text: the instance first, then what happened (a daily summary spans several lines). */
export function noticeText(n: Notice): string {
  const spec = specOf(n.kind);
  let body: string;
  if (spec === undefined) {
    const json = JSON.stringify(n.data);
    body = `${n.kind}${json === '{}' ? '' : ` ${json.length > BRIEF ? `${json.slice(0, BRIEF)}…` : json}`}`;
  } else body = spec.line(n.data, n.time);
  return n.instance === undefined ? body : `${n.instance} ${body}`;
}
