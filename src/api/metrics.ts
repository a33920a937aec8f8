/**
 * The daemon's Prometheus metrics (prom-client). Nothing is counted inside the engine: each figure is read at
 * an existing seam when Prometheus scrapes. Orders and fills are counted from the journal (so they match the
 * database and survive restarts), instance state, position and PnL come from the status read model, jobs from
 * the scheduler's stats, brakes and balances from the engine, and exchange requests are observed on the
 * client's request path (the one thing counted as it happens). Labels stay bounded: instances, symbols, sides,
 * order types, the seven endpoints, error codes; never an order id.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Engine } from '../engine/engine.js';
import type { RequestObserver } from '../exchange/client.js';
import type { StatusView } from '../status/status-view.js';
import type { JobStats } from '../ports/scheduler.js';
import type { FillTotal } from '../store/fills.js';
import type { OrderCount } from '../store/order-journal.js';
import type { Store } from '../store/store.js';

const P = 'spot_bot_';

/** What the collectors read at scrape time. */
export interface MetricSources {
  store: Pick<Store, 'orders' | 'fills'>;
  /** The status read model (the same one the API and `bot status` show). */
  status: () => StatusView;
  engine: Pick<Engine, 'instances' | 'brakes' | 'balances'>;
  jobs: () => JobStats[];
  now: () => number;
  /** Export balances (METRICS_BALANCES). */
  balances: boolean;
}

export interface DaemonMetrics {
  registry: Registry;
  /** Give it to the exchange client: requests, latency, errors, retries. */
  exchangeObserver: RequestObserver;
  /** Starts reading the daemon's state at each scrape (before this, only process and exchange metrics). */
  bind(sources: MetricSources): void;
  /** The exposition text and its content type. */
  render(): Promise<{ text: string; contentType: string }>;
}

/** Database counts are read at most this often (a scrape storm costs one scan). */
const DB_CACHE_MS = 1_000;

const ORDER_LABELS = ['instance', 'symbol', 'side', 'type'] as const;
const FINAL_CANCELLED = new Set(['CANCELED', 'CANCELLED', 'EXPIRED']);

export function createMetrics(): DaemonMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  let sources: MetricSources | undefined;
  let cached: { at: number; orders: OrderCount[]; fills: FillTotal[] } | undefined;
  const db = () => {
    if (sources === undefined) return undefined;
    const now = sources.now();
    if (cached === undefined || now - cached.at >= DB_CACHE_MS)
      cached = { at: now, orders: sources.store.orders.counts(), fills: sources.store.fills.totals() };
    return cached;
  };
  const orderLabels = (c: OrderCount) => ({
    instance: c.instance ?? 'external',
    symbol: c.symbol,
    side: c.side,
    type: c.type,
  });

  /** A counter whose value is read from the journal: reset and refilled at each scrape. */
  const journalCounter = (name: string, help: string, pick: (c: OrderCount) => boolean) => {
    const counter: Counter<(typeof ORDER_LABELS)[number]> = new Counter({
      name: `${P}${name}`,
      help,
      labelNames: ORDER_LABELS,
      registers,
      collect() {
        const counts = db();
        if (counts === undefined) return;
        counter.reset();
        for (const c of counts.orders) if (pick(c)) counter.inc(orderLabels(c), c.n);
      },
    });
  };
  journalCounter('orders_placed_total', 'Orders the venue accepted (given an exchange id).', (c) => c.placed === 1);
  journalCounter('orders_rejected_total', 'Orders the venue refused.', (c) => c.status === 'REJECTED');
  journalCounter('orders_filled_total', 'Orders completely filled.', (c) => c.status === 'FILLED');
  journalCounter('orders_cancelled_total', 'Orders cancelled (or expired) on the venue.', (c) =>
    FINAL_CANCELLED.has(c.status),
  );
  const unknown: Gauge<'instance' | 'symbol'> = new Gauge({
    name: `${P}orders_unknown_outcome`,
    help: 'Orders whose outcome is not known yet (pending or unknown), awaiting reconciliation.',
    labelNames: ['instance', 'symbol'],
    registers,
    collect() {
      const counts = db();
      if (counts === undefined) return;
      unknown.reset();
      for (const c of counts.orders)
        if (c.status === 'UNKNOWN' || c.status === 'PENDING')
          unknown.inc({ instance: c.instance ?? 'external', symbol: c.symbol }, c.n);
    },
  });
  const refused: Counter<'instance' | 'symbol'> = new Counter({
    name: `${P}orders_refused_total`,
    help: 'Order intents refused by the bot before sending (pair rules, risk, balance, brakes), since the start.',
    labelNames: ['instance', 'symbol'],
    registers,
    collect() {
      if (sources === undefined) return;
      refused.reset();
      for (const i of sources.engine.instances())
        refused.inc({ instance: i.name, symbol: i.symbol }, i.counters.refused);
    },
  });
  const fills: Counter<'instance' | 'symbol' | 'side'> = new Counter({
    name: `${P}fills_total`,
    help: 'Fills recorded.',
    labelNames: ['instance', 'symbol', 'side'],
    registers,
    collect() {
      const counts = db();
      if (counts === undefined) return;
      fills.reset();
      for (const f of counts.fills)
        fills.inc({ instance: f.instance ?? 'external', symbol: f.symbol, side: f.side }, f.n);
    },
  });
  const notional: Counter<'instance' | 'symbol' | 'side'> = new Counter({
    name: `${P}traded_notional_total`,
    help: 'Value of the fills recorded (price times quantity), in the quote currency of the symbol.',
    labelNames: ['instance', 'symbol', 'side'],
    registers,
    collect() {
      const counts = db();
      if (counts === undefined) return;
      notional.reset();
      for (const f of counts.fills)
        notional.inc({ instance: f.instance ?? 'external', symbol: f.symbol, side: f.side }, f.notional);
    },
  });

  // The exchange client's request path: counted as it happens.
  const requests = new Counter({
    name: `${P}exchange_requests_total`,
    help: 'Requests to the exchange (each attempt), by endpoint and outcome (ok or error).',
    labelNames: ['endpoint', 'outcome'] as const,
    registers,
  });
  const latency = new Histogram({
    name: `${P}exchange_request_duration_seconds`,
    help: 'Time from sending a request to the exchange until its answer was read.',
    labelNames: ['endpoint'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });
  const errors = new Counter({
    name: `${P}exchange_errors_total`,
    help: "Failed requests to the exchange by error code (the exchange's own code when it gave one).",
    labelNames: ['code'] as const,
    registers,
  });
  const retries = new Counter({
    name: `${P}exchange_retries_total`,
    help: 'Reads retried after a transient error, by endpoint.',
    labelNames: ['endpoint'] as const,
    registers,
  });
  const exchangeObserver: RequestObserver = {
    requested(endpoint, ok, seconds, code) {
      requests.inc({ endpoint, outcome: ok ? 'ok' : 'error' });
      latency.observe({ endpoint }, seconds);
      if (!ok) errors.inc({ code: code ?? 'unknown' });
    },
    retried(endpoint) {
      retries.inc({ endpoint });
    },
  };

  // The scheduler's stats.
  const jobGauge = (name: string, help: string, value: (j: JobStats, now: number) => number | undefined) => {
    const gauge: Gauge<'job'> = new Gauge({
      name: `${P}${name}`,
      help,
      labelNames: ['job'],
      registers,
      collect() {
        if (sources === undefined) return;
        gauge.reset();
        const now = sources.now();
        for (const j of sources.jobs()) {
          const v = value(j, now);
          if (v !== undefined) gauge.set({ job: j.name }, v);
        }
      },
    });
  };
  const jobCounter = (name: string, help: string, value: (j: JobStats) => number) => {
    const counter: Counter<'job'> = new Counter({
      name: `${P}${name}`,
      help,
      labelNames: ['job'],
      registers,
      collect() {
        if (sources === undefined) return;
        counter.reset();
        for (const j of sources.jobs()) counter.inc({ job: j.name }, value(j));
      },
    });
  };
  jobCounter('job_runs_total', 'Runs of each scheduled job (market polls, orders poll, refresh).', (j) => j.runs);
  jobCounter('job_failures_total', 'Runs that ended with an error.', (j) => j.failures);
  jobCounter(
    'job_missed_total',
    'Firings the timer woke up too late for, or skipped while the job still ran.',
    (j) => j.missed + j.overlapsSkipped,
  );
  jobGauge('job_tick_lag_seconds', 'How late the last run started after the time it was scheduled for.', (j) =>
    j.lastLagMs === undefined ? undefined : j.lastLagMs / 1000,
  );
  jobGauge(
    'job_last_success_age_seconds',
    'Time since the last run that succeeded (since the job was scheduled, before a first success).',
    (j, now) => (now - (j.lastSucceededAt ?? j.scheduledAt)) / 1000,
  );

  // The read model: instance state, position and PnL.
  const STATES = ['running', 'paused', 'refused', 'stopped', 'unknown'] as const;
  const state: Gauge<'instance' | 'state'> = new Gauge({
    name: `${P}instance_state`,
    help: 'Each instance has 1 on its current state (running, paused, refused, stopped) and 0 on the others.',
    labelNames: ['instance', 'state'],
    registers,
    collect() {
      if (sources === undefined) return;
      state.reset();
      for (const i of sources.status().report.instances)
        for (const s of STATES) state.set({ instance: i.instance, state: s }, i.state === s ? 1 : 0);
    },
  });
  const perInstance = (
    name: string,
    help: string,
    value: (i: StatusView['report']['instances'][number]) => number | undefined,
  ) => {
    const gauge: Gauge<'instance' | 'symbol'> = new Gauge({
      name: `${P}${name}`,
      help,
      labelNames: ['instance', 'symbol'],
      registers,
      collect() {
        if (sources === undefined) return;
        gauge.reset();
        for (const i of sources.status().report.instances) {
          const v = value(i);
          if (v !== undefined) gauge.set({ instance: i.instance, symbol: i.symbols.join(',') }, v);
        }
      },
    });
  };
  perInstance('position', 'Net position of the instance from its fills, in the base currency.', (i) =>
    i.position.quantity.toNumber(),
  );
  perInstance('realised_pnl', 'Realised PnL of the instance, in the quote currency.', (i) => i.realisedPnl.toNumber());
  perInstance('unrealised_pnl', 'Unrealised PnL of the position at the last price, in the quote currency.', (i) =>
    i.unrealisedPnl?.toNumber(),
  );

  // The brakes.
  const brake = (name: string, help: string, on: (s: MetricSources) => boolean) => {
    const gauge: Gauge = new Gauge({
      name: `${P}${name}`,
      help,
      registers,
      collect() {
        if (sources !== undefined) gauge.set(on(sources) ? 1 : 0);
      },
    });
  };
  brake(
    'kill_switch',
    '1 while the kill switch is on (its file exists): no new orders.',
    (s) => s.engine.brakes().killSwitch,
  );
  brake(
    'circuit_breaker_open',
    '1 while the circuit breaker is open after repeated venue errors: no new orders.',
    (s) => s.engine.brakes().breakerOpenUntil !== undefined,
  );
  brake(
    'trading_halted',
    '1 while trading is halted by an authentication failure (until cleared or restarted).',
    (s) => s.engine.brakes().halted !== undefined,
  );
  const balance: Gauge<'asset' | 'kind'> = new Gauge({
    name: `${P}balance`,
    help: 'Account balances as last read, by asset and kind (free, locked); only with METRICS_BALANCES=true.',
    labelNames: ['asset', 'kind'],
    registers,
    collect() {
      if (sources === undefined || !sources.balances) return;
      balance.reset();
      for (const b of sources.engine.balances()) {
        balance.set({ asset: b.asset, kind: 'free' }, b.free.toNumber());
        balance.set({ asset: b.asset, kind: 'locked' }, b.locked.toNumber());
      }
    },
  });

  return {
    registry,
    exchangeObserver,
    bind(s) {
      sources = s;
      cached = undefined;
    },
    async render() {
      return { text: await registry.metrics(), contentType: registry.contentType };
    },
  };
}
