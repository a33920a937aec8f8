/**
 * What `status` shows, read from the store alone (the daemon may or may not be running): per instance its
 * state (from the last lifecycle event), open orders, today's fills and PnL; engine-wide, the last kill
 * switch, circuit breaker and authentication events.
 */
import { D, type Dec, type DecimalLike, dec } from '../market/decimal.js';
import type { EventKind, EventRow } from '../store/events.js';
import type { FillRow } from '../store/fills.js';
import { isActive, type OrderRow } from '../store/order-journal.js';
import type { Store } from '../store/store.js';
import { utcDay } from '../market/position.js';

const DAY_MS = 86_400_000;

const LIFECYCLE = ['started', 'resumed', 'paused', 'stopped', 'start-refused'] as const;

export interface InstanceStatusReport {
  instance: string;
  /** From the last lifecycle event: running, paused, stopped, refused, or unknown (never started). */
  state: 'running' | 'paused' | 'stopped' | 'refused' | 'unknown';
  reason: string | undefined;
  since: number | undefined;
  symbols: string[];
  openOrders: OrderRow[];
  todaysFills: FillRow[];
  position: { quantity: Dec; averagePrice: Dec };
  realisedPnl: Dec;
  realisedToday: Dec;
  /** Given a price for the instance's symbol; undefined otherwise. */
  unrealisedPnl: Dec | undefined;
  /** Protections tripped now (no new entries until `until`), from their events. */
  protections: ActiveProtection[];
}

export interface ActiveProtection {
  protection: string;
  reason: string;
  until: number;
}

const PROTECTION_EVENTS = ['protection-tripped', 'protection-lifted'] as const;

/** The protections whose last event is a trip still running at `now`. */
function activeProtections(store: Store, instance: string, now: number): ActiveProtection[] {
  const last = new Map<string, EventRow>();
  for (const e of store.events.list({ instance, kinds: [...PROTECTION_EVENTS] }))
    last.set(String(e.data.protection), e);
  const active: ActiveProtection[] = [];
  for (const [protection, e] of last) {
    const until = e.data.until;
    if (e.kind === 'protection-tripped' && typeof until === 'number' && until > now)
      active.push({ protection, reason: String(e.data.reason), until });
  }
  return active;
}

export interface StatusReport {
  time: number;
  instances: InstanceStatusReport[];
  /** External (adopted) orders still live. */
  externalOrders: OrderRow[];
  /**
   * The last count of open orders on the account this bot did not place (the engine's `external-orders`
   * event): another bot may be trading the account while it says some are open.
   */
  foreignOrders: EventRow | undefined;
  killSwitch: EventRow | undefined;
  circuitBreaker: EventRow | undefined;
  authFailure: EventRow | undefined;
}

function stateOf(event: EventRow | undefined): Pick<InstanceStatusReport, 'state' | 'reason' | 'since'> {
  if (!event) return { state: 'unknown', reason: undefined, since: undefined };
  const text = (key: string) => {
    const value = event.data[key];
    return typeof value === 'string' ? value : undefined;
  };
  switch (event.kind) {
    case 'started':
    case 'resumed':
      return { state: 'running', reason: undefined, since: event.time };
    case 'paused':
      return { state: 'paused', reason: text('reason'), since: event.time };
    case 'start-refused':
      return { state: 'refused', reason: text('reason'), since: event.time };
    default:
      return { state: 'stopped', reason: text('pausedReason'), since: event.time };
  }
}

function latest(store: Store, kind: EventKind): EventRow | undefined {
  return store.events.latest([kind]);
}

/**
 * The status of every instance the store knows. `prices` (by symbol) gives unrealised PnL; `now` decides
 * which UTC day "today" is.
 */
export function readStatus(
  store: Store,
  options: { now: number; prices?: ReadonlyMap<string, DecimalLike> },
): StatusReport {
  const names = new Set([...store.orders.instances(), ...store.events.instances()]);
  const today = utcDay(options.now);
  const active = store.orders.active();
  const instances = [...names].sort().map((instance): InstanceStatusReport => {
    // The position as folded when each fill was recorded (store/positions.ts): one row, not every fill.
    const tracker = store.fills.positions.tracker(instance);
    const openOrders = active.filter((o) => o.instance === instance && isActive(o.status));
    const symbols = [...new Set([...openOrders.map((o) => o.symbol), ...store.fills.symbolsOf(instance)])].sort();
    const price = symbols.length === 1 ? options.prices?.get(symbols[0] as string) : undefined;
    const { quantity, averagePrice, realisedPnl } = tracker.position;
    return {
      instance,
      ...stateOf(store.events.latest(LIFECYCLE, instance)),
      symbols,
      openOrders,
      todaysFills: store.fills.forInstance(instance, today * DAY_MS),
      position: { quantity, averagePrice },
      realisedPnl,
      realisedToday: new D(store.fills.positions.realisedOn(instance, today)),
      unrealisedPnl: price === undefined ? undefined : tracker.unrealisedAt(dec(price)),
      protections: activeProtections(store, instance, options.now),
    };
  });
  return {
    time: options.now,
    instances,
    externalOrders: active.filter((o) => o.external),
    foreignOrders: latest(store, 'external-orders'),
    killSwitch: latest(store, 'kill-switch'),
    circuitBreaker: latest(store, 'circuit-breaker'),
    authFailure: latest(store, 'auth-failed'),
  };
}
