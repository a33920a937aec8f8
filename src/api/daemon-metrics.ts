/**
 * The daemon's Prometheus metrics (prom-client). Nothing is counted inside the engine: each figure is read at
 * an existing seam when Prometheus scrapes. Orders and fills are counted from the journal's counts, kept by
 * triggers as its rows are written (so they match the database, survive restarts, and a scrape reads a few
 * rows however long the journal), instance state, position and PnL come from the status read model, jobs from
 * the scheduler's stats, brakes and balances from the engine, and exchange requests are observed on the
 * client's request path (the one thing counted as it happens). Labels stay bounded: instances, symbols, sides,
 * order types, the endpoints (ENDPOINTS), error codes; never an order id.
 *
 * Every series a counter will have starts at 0 (each instance's configured symbol, sides and order types, each
 * endpoint and outcome, the client's error codes), so the first event shows in `increase()` and in alerts.
 *
 * Prometheus attaches `instance` (the scraped address) and `job` (the scrape job) to every series, so the bot's
 * own are `bot_instance` and `bot_job` (a job by name: market, orders poll, refresh; its cron in `schedule`).
 * Values in a quote currency carry it in `quote`. Points in time are Unix timestamps in seconds (`_timestamp_seconds`),
 * so a dashboard computes ages with `time() - …` and a stalled scrape does not freeze them.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { CLIENT_ERROR_CODES, ENDPOINTS, type RequestObserver } from '../exchange/client.js';
import type { BuildInfo, Operator } from '../operator/operator.js';
import type { FillTotal, GroupTotal, InstanceStatusReport, OrderCount, StatusView } from '../operator/queries.js';
import { instanceGroup } from '../market/instance-names.js';
import type { JobStats } from '../ports/scheduler.js';

const P = 'spot_bot_';

/** What the collectors read at scrape time. */
export interface MetricSources {
  /** The operator layer's queries: the status read model (the one the API and `bot status` show), the journal's counts, the engine's brakes and balances, the jobs. */
  read: Pick<
    Operator['read'],
    | 'status'
    | 'orderCounts'
    | 'fillTotals'
    | 'engineInstances'
    | 'brakes'
    | 'balanceFigures'
    | 'jobs'
    | 'quoteAsset'
    | 'venueRefusals'
  >;
  now: () => number;
  /** Export balances (METRICS_BALANCES). */
  balances: boolean;
  /** Whether /readyz would answer ready now. */
  ready: () => boolean;
  build: BuildInfo;
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

/** Database counts are read at most this often (a scrape storm costs one read). */
const DB_CACHE_MS = 1_000;

const ORDER_LABELS = ['bot_instance', 'symbol', 'side', 'type'] as const;
type OrderLabel = (typeof ORDER_LABELS)[number];
/** Label values and the value of one sample. */
type Sample<L extends string> = [Partial<Record<L, string>>, number];
const FINAL_CANCELLED = new Set(['CANCELED', 'CANCELLED', 'EXPIRED']);
const SIDES = ['BUY', 'SELL'] as const;
/** The order types an instance may send (intent kinds, as the journal records them). */
const ORDER_TYPES = ['LIMIT', 'MARKET', 'STOP_LIMIT', 'OCO'] as const;

/** `samples` with a 0 for each of `zeros`' label sets it has no sample of, in the order first seen. */
function withZeros<L extends string>(zeros: Sample<L>[0][], samples: Sample<L>[]): Sample<L>[] {
  const all = new Map<string, Sample<L>>();
  for (const labels of zeros) all.set(JSON.stringify(labels), [labels, 0]);
  for (const [labels, value] of samples) {
    const key = JSON.stringify(labels);
    all.set(key, [labels, (all.get(key)?.[1] ?? 0) + value]);
  }
  return [...all.values()];
}

/** A job by its name, without the cron some names carry to be unique ('market * * * * * *' is 'market'). */
function jobName(job: JobStats): string {
  const suffix = ` ${job.cron}`;
  return job.name.endsWith(suffix) ? job.name.slice(0, -suffix.length) : job.name;
}

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
      cached = { at: now, orders: sources.read.orderCounts(), fills: sources.read.fillTotals() };
    return cached;
  };
  /** Each configured instance's name and symbol (its symbol before its first fill too). */
  const configured = () =>
    sources?.read.engineInstances().map((i) => ({ bot_instance: i.name, symbol: i.symbol })) ?? [];
  const fromOrders = (pick: (c: OrderCount) => boolean) => () => {
    const counts = db()?.orders;
    if (counts === undefined) return undefined;
    const zeros = configured().flatMap((i) =>
      SIDES.flatMap((side) => ORDER_TYPES.map((type) => ({ ...i, side, type }))),
    );
    return withZeros<OrderLabel>(
      zeros,
      counts.flatMap((c): Sample<OrderLabel>[] =>
        pick(c)
          ? [[{ bot_instance: c.instance ?? 'external', symbol: c.symbol, side: c.side, type: c.type }, c.n]]
          : [],
      ),
    );
  };
  /** The quote asset a symbol's values are in ('' when the daemon does not know the pair). */
  const quote = (symbol: string) => sources?.read.quoteAsset(symbol) ?? '';

  /**
   * A metric read from a source at each scrape: reset, then refilled. A counter's source is monotonic (the
   * journal's totals); a gauge's is the present value.
   */
  const fromSource = <L extends string>(
    kind: 'counter' | 'gauge',
    name: string,
    help: string,
    labelNames: readonly L[],
    samples: () => Sample<L>[] | undefined,
  ): void => {
    const config = { name: `${P}${name}`, help, labelNames, registers };
    const refill = (metric: Counter<L> | Gauge<L>, write: (labels: Sample<L>[0], value: number) => void) => {
      const values = samples();
      if (values === undefined) return;
      metric.reset();
      for (const [labels, value] of values) write(labels, value);
    };
    if (kind === 'counter')
      new Counter<L>({
        ...config,
        collect() {
          refill(this, (labels, value) => this.inc(labels, value));
        },
      });
    else
      new Gauge<L>({
        ...config,
        collect() {
          refill(this, (labels, value) => this.set(labels, value));
        },
      });
  };

  fromSource(
    'counter',
    'orders_placed_total',
    'Orders the venue accepted (given an exchange id).',
    ORDER_LABELS,
    fromOrders((c) => c.placed === 1),
  );
  fromSource(
    'counter',
    'orders_rejected_total',
    'Orders the venue refused.',
    ORDER_LABELS,
    fromOrders((c) => c.status === 'REJECTED'),
  );
  fromSource(
    'counter',
    'orders_filled_total',
    'Orders completely filled.',
    ORDER_LABELS,
    fromOrders((c) => c.status === 'FILLED'),
  );
  fromSource(
    'counter',
    'orders_cancelled_total',
    'Orders cancelled (or expired) on the venue.',
    ORDER_LABELS,
    fromOrders((c) => FINAL_CANCELLED.has(c.status)),
  );
  fromSource(
    'gauge',
    'orders_unknown_outcome',
    'Orders whose outcome is not known yet (pending or unknown), awaiting reconciliation.',
    ['bot_instance', 'symbol'],
    // 0 for every configured instance and every instance and symbol with orders (a gauge with no sample would
    // leave its panel empty).
    () => {
      const counts = db()?.orders;
      if (counts === undefined) return undefined;
      return withZeros<'bot_instance' | 'symbol'>(
        configured(),
        counts.map((c) => [
          { bot_instance: c.instance ?? 'external', symbol: c.symbol },
          c.status === 'UNKNOWN' || c.status === 'PENDING' ? c.n : 0,
        ]),
      );
    },
  );
  fromSource(
    'counter',
    'orders_refused_total',
    'Order intents refused by the bot before sending (pair rules, risk, balance, brakes), since the start.',
    ['bot_instance', 'symbol'],
    () =>
      sources?.read
        .engineInstances()
        .map((i): Sample<'bot_instance' | 'symbol'> => [
          { bot_instance: i.name, symbol: i.symbol },
          i.counters.refused,
        ]),
  );
  fromSource(
    'counter',
    'venue_answers_refused_total',
    "Figures the venue gave that the bot refused as impossible (a fill past its order, an executed quantity going back, a price outside the pair's bounds, a fee above the fill's value), by field, since the start.",
    ['field'],
    () => sources?.read.venueRefusals().map((r): Sample<'field'> => [{ field: r.field }, r.count]),
  );
  const fromFills =
    <L extends string>(
      sample: (f: FillTotal) => Sample<L>,
      zero: (i: { bot_instance: string; symbol: string }, side: string) => Sample<L>[0],
    ) =>
    () => {
      const fills = db()?.fills;
      if (fills === undefined) return undefined;
      return withZeros<L>(
        configured().flatMap((i) => SIDES.map((side) => zero(i, side))),
        fills.map(sample),
      );
    };
  fromSource(
    'counter',
    'fills_total',
    'Fills recorded.',
    ['bot_instance', 'symbol', 'side'],
    fromFills(
      (f) => [{ bot_instance: f.instance ?? 'external', symbol: f.symbol, side: f.side }, f.n],
      (i, side) => ({ ...i, side }),
    ),
  );
  fromSource(
    'counter',
    'traded_notional_total',
    'Value of the fills recorded (price times quantity), in the quote currency (label quote).',
    ['bot_instance', 'symbol', 'side', 'quote'],
    fromFills(
      (f) => [
        { bot_instance: f.instance ?? 'external', symbol: f.symbol, side: f.side, quote: quote(f.symbol) },
        f.notional,
      ],
      (i, side) => ({ ...i, side, quote: quote(i.symbol) }),
    ),
  );

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
  for (const endpoint of ENDPOINTS) {
    for (const outcome of ['ok', 'error']) requests.inc({ endpoint, outcome }, 0);
    // Only reads are retried.
    if (endpoint.startsWith('GET ')) retries.inc({ endpoint }, 0);
  }
  for (const code of CLIENT_ERROR_CODES) errors.inc({ code }, 0);
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
  const perJob = (value: (j: JobStats, now: number) => number | undefined) => () => {
    if (sources === undefined) return undefined;
    const now = sources.now();
    return sources.read.jobs().flatMap((j): Sample<'bot_job' | 'schedule'>[] => {
      const v = value(j, now);
      return v === undefined ? [] : [[{ bot_job: jobName(j), schedule: j.cron }, v]];
    });
  };
  const JOB_LABELS = ['bot_job', 'schedule'] as const;
  fromSource(
    'counter',
    'job_runs_total',
    'Runs of each scheduled job (market polls, orders poll, refresh).',
    JOB_LABELS,
    perJob((j) => j.runs),
  );
  fromSource(
    'counter',
    'job_failures_total',
    'Runs that ended with an error.',
    JOB_LABELS,
    perJob((j) => j.failures),
  );
  fromSource(
    'counter',
    'job_missed_total',
    'Firings the timer woke up too late for, or skipped while the job still ran.',
    JOB_LABELS,
    perJob((j) => j.missed + j.overlapsSkipped),
  );
  fromSource(
    'gauge',
    'job_tick_lag_seconds',
    'How late the last run started after the time it was scheduled for.',
    JOB_LABELS,
    perJob((j) => (j.lastLagMs === undefined ? undefined : j.lastLagMs / 1000)),
  );
  fromSource(
    'gauge',
    'replay_lag_seconds',
    "Paper on recordings: how far the recording's time is behind PAPER_SPEED's pace, in recorded seconds (the replay waits for the daemon, so nothing is skipped); 0 on the pace, and on any other clock.",
    [],
    () => {
      const replay = sources?.read.status().view.replay;
      return replay === undefined ? undefined : [[{}, replay.lagMs / 1000]];
    },
  );
  fromSource(
    'gauge',
    'job_scheduled_timestamp_seconds',
    'When the job was scheduled (Unix time): what its age counts from before a first success.',
    JOB_LABELS,
    perJob((j) => j.scheduledAt / 1000),
  );
  fromSource(
    'gauge',
    'job_last_success_timestamp_seconds',
    'When the last run that succeeded ended (Unix time); absent before a first success.',
    JOB_LABELS,
    perJob((j) => (j.lastSucceededAt === undefined ? undefined : j.lastSucceededAt / 1000)),
  );

  // The read model: instance state, position and PnL.
  const STATES = ['running', 'paused', 'refused', 'stopped', 'unknown'] as const;
  fromSource(
    'gauge',
    'instance_state',
    'Each instance has 1 on its current state (running, paused, refused, stopped) and 0 on the others.',
    ['bot_instance', 'state'],
    () =>
      sources?.read
        .status()
        .view.report.instances.flatMap((i) =>
          STATES.map((s): Sample<'bot_instance' | 'state'> => [
            { bot_instance: i.instance, state: s },
            i.state === s ? 1 : 0,
          ]),
        ),
  );
  /** An instance's configured symbol (or, a pair of a multi-pair file, the one its name says). */
  const symbolOf = (instance: string) => {
    const symbols = configured().flatMap((i) => (i.bot_instance === instance ? [i.symbol] : []));
    const pair = instanceGroup(instance)?.symbol;
    return symbols.length > 0 || pair === undefined ? symbols : [pair];
  };
  /** One sample per instance; with `inQuote`, labelled with the quote asset its value is in. */
  const perInstance =
    (value: (i: InstanceStatusReport, view: StatusView) => number | undefined, inQuote: boolean) => () => {
      const view = sources?.read.status().view;
      return view?.report.instances.flatMap((i): Sample<'bot_instance' | 'symbol' | 'quote'>[] => {
        const v = value(i, view);
        // Before its first order or fill, an instance's symbol is its configured one.
        const symbols = i.symbols.length > 0 ? i.symbols : symbolOf(i.instance);
        const labels = { bot_instance: i.instance, symbol: symbols.join(',') };
        const quotes = inQuote ? { quote: [...new Set(symbols.map(quote))].join(',') } : {};
        return v === undefined ? [] : [[{ ...labels, ...quotes }, v]];
      });
    };
  fromSource(
    'gauge',
    'position',
    'Net position of the instance from its fills, in the base currency.',
    ['bot_instance', 'symbol'],
    perInstance((i) => i.position.quantity.toNumber(), false),
  );
  fromSource(
    'gauge',
    'realised_pnl',
    'Realised PnL of the instance, in the quote currency (label quote).',
    ['bot_instance', 'symbol', 'quote'],
    perInstance((i) => i.realisedPnl.toNumber(), true),
  );
  fromSource(
    'gauge',
    'unrealised_pnl',
    'Unrealised PnL of the position at the last price, in the quote currency (label quote).',
    ['bot_instance', 'symbol', 'quote'],
    perInstance((i) => i.unrealisedPnl?.toNumber(), true),
  );
  fromSource(
    'gauge',
    'exposure',
    'Quote the instance holds: its position above dust and its working buys at the last price (label quote).',
    ['bot_instance', 'symbol', 'quote'],
    perInstance((i, view) => view.holdings.get(i.instance)?.exposure?.toNumber(), true),
  );
  // A multi-pair strategy file's pairs together (bot_group: the file's name), one series per quote asset.
  const perGroup = (name: string, help: string, value: (t: GroupTotal) => number | undefined) =>
    fromSource('gauge', `group_${name}`, help, ['bot_group', 'quote'], () =>
      sources?.read.status().view.groups.flatMap((g) =>
        g.totals.flatMap((t): Sample<'bot_group' | 'quote'>[] => {
          const v = value(t);
          return v === undefined ? [] : [[{ bot_group: g.name, quote: t.quoteAsset }, v]];
        }),
      ),
    );
  perGroup('pairs', "The file's pairs (instances).", (t) => t.pairs);
  perGroup('running_pairs', "The file's pairs running now.", (t) => t.running);
  perGroup(
    'open_trades',
    'Pairs holding a trade: a position above dust or a working buy (maxOpenTrades counts these).',
    (t) => t.openTrades,
  );
  perGroup('exposure', 'Quote the pairs hold together at their last prices (maxExposure bounds this).', (t) =>
    t.exposure?.toNumber(),
  );
  perGroup('realised_pnl', 'Realised PnL of the pairs together.', (t) => t.realisedPnl.toNumber());
  perGroup('unrealised_pnl', 'Unrealised PnL of the pairs together at their last prices.', (t) =>
    t.unrealisedPnl.toNumber(),
  );

  // The brakes, and the balances when asked for.
  const brake = (on: (s: MetricSources) => boolean) => (): Sample<never>[] | undefined =>
    sources === undefined ? undefined : [[{}, on(sources) ? 1 : 0]];
  fromSource(
    'gauge',
    'kill_switch',
    '1 while the kill switch is on (its file exists): no new orders.',
    [],
    brake((s) => s.read.brakes().killSwitch),
  );
  fromSource(
    'gauge',
    'stop_buy',
    '1 while stop-buy is on: no new BUY orders (exits and protective SELLs still go out).',
    [],
    brake((s) => s.read.brakes().stopBuy),
  );
  fromSource(
    'gauge',
    'circuit_breaker_open',
    '1 while the circuit breaker is open after repeated venue errors: no new orders.',
    [],
    brake((s) => s.read.brakes().breakerOpenUntil !== undefined),
  );
  fromSource(
    'gauge',
    'trading_halted',
    '1 while trading is halted by an authentication failure (until cleared or restarted).',
    [],
    brake((s) => s.read.brakes().halted !== undefined),
  );
  fromSource(
    'gauge',
    'balance',
    'Account balances as last read, by asset and kind (free, locked); only with METRICS_BALANCES=true.',
    ['asset', 'kind'],
    () =>
      sources?.balances === true
        ? sources.read.balanceFigures().flatMap((b): Sample<'asset' | 'kind'>[] => [
            [{ asset: b.asset, kind: 'free' }, b.free],
            [{ asset: b.asset, kind: 'locked' }, b.locked],
          ])
        : undefined,
  );

  // What runs, and whether it does its job.
  fromSource(
    'gauge',
    'build_info',
    'Always 1: the version and git revision of the running bot in its labels.',
    ['version', 'revision'],
    () =>
      sources === undefined
        ? undefined
        : [[{ version: sources.build.version, revision: sources.build.revision ?? 'unknown' }, 1]],
  );
  fromSource(
    'gauge',
    'ready',
    '1 while /readyz answers ready (the polls succeed, the journal takes writes, trading is not halted), else 0.',
    [],
    brake((s) => s.ready()),
  );

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
