/**
 * The composition root: the one place that picks live or paper adapters. It loads and validates every strategy
 * file, opens the store, builds the venue, starts the engine (reconciliation before anything is placed) and
 * schedules its jobs on the wall clock; `stop` undoes it all in order. Start-up against a venue that cannot be
 * reached is retried with backoff; authentication and configuration errors stop it at once.
 */
import { createMetrics } from '../api/daemon-metrics.js';
import { ProbeState } from '../api/probes.js';
import { readinessNow } from '../api/public-routes.js';
import type { Env } from './env.js';
import { loadStrategyFiles, type StrategyInstance } from '../config/loader.js';
import { somePairListMayChoose } from '../config/strategy-file.js';
import { withPairListPairs } from './pair-universe.js';
import { chartCandleNeeds, warmUpMs, watchedSymbols } from '../strategy/candle-needs.js';
import { ClockScheduler } from './clock-scheduler.js';
import { DaemonScheduling, withDecisions } from './daemon-scheduling.js';
import { Engine, type PauseCause } from '../engine/engine.js';
import { DEFAULT_CIRCUIT_BREAKER } from '../engine/risk.js';
import { ConfigError, errorCode } from '../errors.js';
import { journalEnd } from '../notify/notifier.js';
import { type Notifications, notificationsFromEnv } from '../notify/setup.js';
import { retryWithBackoff } from '../ops/backoff.js';
import { type Logger, logTail } from '../ops/logger.js';
import { type Clock } from '../ports/clock.js';
import { ReplayClock } from '../clocks/replay-clock.js';
import { watchReplayLag } from './replay-lag.js';
import { wallClock } from '../clocks/wall-clock.js';
import { meaningOf } from '../ports/venue-errors.js';
import type { Scheduler } from '../ports/scheduler.js';
import { acquireJournalLock, holderText, type JournalLock, lockPathOf } from '../store/journal-lock.js';
import { JournalLease, leaseVerdict, readLease } from '../store/journal-lease.js';
import { lockHolder } from './lock-holder.js';
import { stepText, upgradeJournal, type UpgradeStep } from '../store/journal-upgrade.js';
import type { Store } from '../store/store.js';
import { DaemonListeners } from './daemon-listeners.js';
import { ensureWritableFolder } from './data-folder.js';
import { PriceRecordingVenue } from '../venues/price-recording-venue.js';
import { createOperatorActions, heldPauses, interruptedExits } from '../operator/actions.js';
import type { Operator } from '../operator/operator.js';
import { createQueries } from '../operator/queries.js';
import { installation } from './installation.js';
import { openRunStore, type RunStore } from './run-history.js';
import { bannerText, planVenue, type VenuePlan } from './venue-plan.js';
import { setUpVenue, type VenueSetup } from './venue-setup.js';

export interface DaemonOptions {
  env: Env;
  logger: Logger;
  /** Aborting it ends a start-up retry loop (a shutdown asked for during start). */
  signal?: AbortSignal;
  /** How long stop waits for running jobs and in-flight requests (default 10 s). */
  stopTimeoutMs?: number;
  /**
   * What fires the jobs (default: the ClockScheduler on the daemon's clock). The parity test drives the same daemon one
   * recorded tick at a time through this port instead of waiting for the clock.
   */
  scheduler?: Scheduler;
  /**
   * The daemon's clock (default: a replay clock at PAPER_SPEED on paper on recordings, else the wall clock).
   * The parity test gives a virtual clock and moves it itself.
   */
  clock?: Clock;
  /** Another daemon took the journal's lease over (this one was silent past it): the process must stop. */
  onLeaseLost?: (why: string) => void;
}

/** The replay clock's speed (PAPER_SPEED) on paper on recordings, not in lockstep; undefined on the wall clock. */
function replaySpeed(plan: VenuePlan): number | undefined {
  return plan.mode === 'paper' && plan.data === 'recording' && !plan.lockstep ? plan.speed : undefined;
}

/**
 * The venue's time: the recording's on paper on recordings (PAPER_SPEED times the wall clock, paused until the
 * jobs are scheduled), else the wall's.
 */
function clockFor(plan: VenuePlan): Clock {
  const speed = replaySpeed(plan);
  if (speed === undefined) return wallClock;
  const replay = new ReplayClock(speed);
  replay.pause();
  return replay;
}

/** How long a stop waits for queued notifications (the daemon's own stop among them) to go out. */
const NOTIFY_STOP_MS = 5_000;

/** Errors that no retry heals: bad configuration, refused credentials. */
export function isFatalStartError(err: unknown): boolean {
  for (let e: unknown = err; e !== undefined && e !== null; e = (e as { cause?: unknown }).cause) {
    if (e instanceof ConfigError || meaningOf(e) === 'authentication') return true;
    const code = errorCode(e);
    if (code === 'E_SIM_CONFIG' || code === 'E_RECORDING' || code === 'E_NO_PAIR_RULES' || code === 'E_FOREIGN_ORDERS')
      return true;
    if (!(e instanceof Error)) break;
  }
  return false;
}

/** Enabled instances from the strategy files; every problem of every file is reported at once. */
async function loadInstances(env: Env): Promise<StrategyInstance[]> {
  const all = await loadStrategyFiles(env.CONFIG_DIR, { strategiesDir: env.STRATEGIES_DIR });
  const enabled = all.filter((i) => i.config.enabled);
  if (enabled.length === 0)
    throw new ConfigError([`CONFIG_DIR: expected at least one enabled strategy file in ${env.CONFIG_DIR}, found none`]);
  return enabled;
}

/** How often a long migration's progress is logged (every step shows on /readyz). */
const UPGRADE_LOG_MS = 5_000;

/** A journal upgrade's steps: each on /readyz as what start-up is doing, each migration and its rows in the log. */
function reportUpgrade(path: string, probes: ProbeState, logger: Logger): (step: UpgradeStep) => void {
  let logged = -Infinity;
  return (step) => {
    const line = stepText(step, path);
    probes.starting(line);
    const now = performance.now();
    if (step.kind === 'rows' && now - logged < UPGRADE_LOG_MS) return;
    logged = now;
    logger.info({ step: step.kind }, line);
  };
}

/** Bounded wait: resolves when `work` settles or after `ms`, whichever first. */
async function atMost(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    work.catch(() => undefined),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]);
  clearTimeout(timer);
}

export class Daemon {
  private stopping: Promise<void> | undefined;

  private constructor(
    readonly plan: VenuePlan,
    readonly engine: Engine,
    readonly setup: VenueSetup,
    private readonly store: Store,
    private readonly venue: PriceRecordingVenue,
    private readonly scheduling: DaemonScheduling,
    /** The HTTP listeners: health, metrics, control API, dashboard (API_PORT), and health and metrics (METRICS_PORT). */
    readonly listeners: DaemonListeners,
    private readonly probes: ProbeState,
    private readonly logger: Logger,
    private readonly clock: Clock,
    private readonly stopTimeoutMs: number,
    private readonly notifications: Notifications | undefined,
    private readonly lock: JournalLock,
    private readonly lease: JournalLease,
  ) {}

  /** Starts everything; on failure closes what was opened and rethrows. */
  static async start(options: DaemonOptions): Promise<Daemon> {
    const { env, logger } = options;
    const plan = planVenue(env);
    const clock = options.clock ?? clockFor(plan);
    if (plan.mode === 'live' && env.PAPER_FRESH)
      throw new ConfigError([
        'PAPER_FRESH (or --fresh): starts a new paper account, and this is MODE=live; a live database is never archived',
      ]);
    // When the start began (the wall's): a chat command sent before it was sent while the daemon was not running.
    const startedAt = wallClock.now();
    ensureWritableFolder(env.DB_PATH, 'DB_PATH');
    // One daemon per journal: a second one stops here, at once, before the strategy modules load and before
    // the journal, the paper account or the venue is touched: by the lock beside the real file, or by the lease
    // inside it (another path, mount or machine).
    const holder = lockHolder();
    const lock = acquireJournalLock(env.DB_PATH, { holder });
    let takeover: string | undefined;
    try {
      takeover = leaseVerdict(env.DB_PATH, readLease(env.DB_PATH), holder, wallClock.now()).takeover;
    } catch (err) {
      lock.release();
      throw err;
    }
    let instances: StrategyInstance[];
    let opened: RunStore;
    const metrics = createMetrics();
    // Health and metrics answer from here on: a venue that cannot be reached yet is a readiness problem, not
    // a reason for an orchestrator to restart the bot (or for its probe to time out). Bound before the journal
    // is opened: a port taken fails the start before anything is written.
    const probes = new ProbeState();
    let listeners: DaemonListeners;
    try {
      instances = await loadInstances(env);
      listeners = await DaemonListeners.start(env, probes, metrics, logger);
    } catch (err) {
      lock.release();
      throw err;
    }
    try {
      // A pair list's file trades the market's pairs of its quote asset: the recordings', or the exchange's.
      const loaded = instances;
      instances = await retryWithBackoff(
        'read the pairs the pair lists choose from',
        () => withPairListPairs(loaded, plan, env, logger),
        {
          logger,
          isFatal: isFatalStartError,
          signal: options.signal,
          onRetry: (line: string) => probes.starting(line),
        },
      );
    } catch (err) {
      await listeners.close();
      lock.release();
      throw err;
    }
    try {
      const began = performance.now();
      const upgraded = await upgradeJournal(env.DB_PATH, wallClock.now(), reportUpgrade(env.DB_PATH, probes, logger));
      if (upgraded !== undefined)
        logger.info(
          { from: upgraded.from, to: upgraded.to, backup: upgraded.backup },
          `journal ${env.DB_PATH} migrated from schema ${upgraded.from} to ${upgraded.to} in ` +
            `${((performance.now() - began) / 1000).toFixed(1)} s; as it was before, it is kept in ${upgraded.backup}`,
        );
      probes.starting('opening the journal');
      opened = openRunStore(
        env.DB_PATH,
        {
          mode: plan.mode,
          venue: plan.mode === 'live' ? plan.baseUrl : 'embedded',
          clock: clock === wallClock ? 'wall' : 'data',
        },
        // When the daemon started is the wall clock's (told beside the venue's time where shown).
        wallClock,
        { fresh: env.PAPER_FRESH, archivesKept: env.PAPER_ARCHIVES_KEPT },
      );
    } catch (err) {
      await listeners.close();
      lock.release();
      throw err;
    }
    // The pairs traded and the informative pairs read: the venue has their data and rules.
    const symbols = watchedSymbols(instances).sort();
    const { store, archivedTo, archivedBecause } = opened;
    let lease: JournalLease;
    try {
      lease = JournalLease.take(store.db, env.DB_PATH, holder, env.JOURNAL_LEASE_MS, () => wallClock.now());
    } catch (err) {
      opened.abandon();
      await listeners.close();
      lock.release();
      throw err;
    }
    // Where this run's records begin: its notifications start there once it runs.
    const runBegan = journalEnd(store);
    if (takeover !== undefined) logger.warn({ db: env.DB_PATH }, `journal lease taken over: ${takeover}`);
    lease.keep(
      (why) => {
        logger.error(`${why}: another daemon uses ${env.DB_PATH}; stopping`);
        options.onLeaseLost?.(why);
      },
      (err) => logger.debug({ err }, 'journal lease: the heartbeat could not be written (tried again)'),
    );
    logger.info(
      { lock: lockPathOf(env.DB_PATH), holder, leaseMs: env.JOURNAL_LEASE_MS },
      `holding the journal's lock (${lockPathOf(env.DB_PATH)}) and its lease as ${holderText(holder)}: no other daemon can use ${env.DB_PATH} while this one runs`,
    );
    if (archivedBecause === 'legacy')
      logger.warn(
        `${env.DB_PATH} held a previous paper run, whose simulated exchange is gone: moved to ${archivedTo}; starting afresh`,
      );
    else if (archivedBecause === 'fresh')
      logger.warn(`fresh start asked for: the previous paper account was moved to ${archivedTo}`);
    const cleanup: (() => Promise<void> | void)[] = [() => listeners.close()];
    // A start that fails writes nothing: the journal is left as it was (run-history.ts), and only the log and the
    // exit status tell of it.
    const undo = async () => {
      for (const step of cleanup.reverse()) await step();
      lease.release();
      opened.abandon();
      lock.release();
    };
    try {
      probes.starting('setting up the venue');
      const retry = {
        logger,
        isFatal: isFatalStartError,
        signal: options.signal,
        onRetry: (line: string) => probes.starting(line),
      };
      const setup = await retryWithBackoff(
        'set up the venue',
        () =>
          setUpVenue(plan, env, symbols, logger, store, metrics.exchangeObserver, clock, warmUpMs(instances), (s) =>
            somePairListMayChoose(instances, s),
          ),
        retry,
      );
      cleanup.push(() => setup.close());
      const banner = bannerText(plan, { simUrl: setup.sim?.url, files: setup.files, replaying: setup.replaying });
      if (plan.mode === 'live') logger.warn({ mode: 'live', baseUrl: plan.baseUrl }, banner);
      else logger.info({ mode: 'paper', data: plan.data }, banner);

      const chartNeeds = chartCandleNeeds(instances.map((i) => ({ ...i, symbol: i.config.symbol })));
      const venue = new PriceRecordingVenue(setup.client, store, clock, symbols, chartNeeds, replaySpeed(plan) ?? 1);
      probes.starting('reading the venue and reconciling the journal');
      // A pause the operator (or an exit) made holds across the restart; an exit a crash interrupted is finished
      // before that instance's strategy may trade again.
      const startPaused = new Map<string, PauseCause>(
        heldPauses(
          store,
          instances.map((i) => i.config.name),
        ),
      );
      const interrupted = interruptedExits(store);
      for (const [name, data] of interrupted)
        if (!startPaused.has(name))
          startPaused.set(name, {
            reason: 'an exit was interrupted by a crash: finishing it',
            ...(typeof data.source === 'string' ? { source: data.source } : {}),
          });
      const engine = await retryWithBackoff(
        'start the engine (read the venue and reconcile the journal)',
        async () => {
          const candidate = new Engine({
            venue,
            clock,
            store,
            logger,
            instances,
            killSwitchFile: env.KILL_SWITCH_FILE,
            stopTimeoutMs: options.stopTimeoutMs,
            circuitBreaker: {
              threshold: env.CIRCUIT_BREAKER_ERRORS,
              baseBackoffMs: env.CIRCUIT_BREAKER_PAUSE_MS,
              maxBackoffMs: Math.max(env.CIRCUIT_BREAKER_PAUSE_MS, DEFAULT_CIRCUIT_BREAKER.maxBackoffMs),
            },
            reconcileWindowMs: env.RECONCILE_WINDOW_MS,
            measureHooks: true,
            startPaused,
            persistCandles: true,
            adoptOpenOrders: plan.mode !== 'live' || env.ADOPT_OPEN_ORDERS,
            // A pair a pair list took up later: its prices kept for `bot status` and its chart for the page.
            instanceAdded: (spec) =>
              venue.watch(
                spec.config.symbol,
                chartCandleNeeds([{ ...spec, symbol: spec.config.symbol }]).get(spec.config.symbol),
              ),
          });
          // Paper on recordings: the data before the replay's start builds the candles, as a backtest's warm-up
          // does (candles this journal saved, taken up at start, stand where there are some).
          for (const t of setup.warmUpTickers()) {
            candidate.warmUp(t.s, t.t, t.p, t.vb ?? NaN);
            venue.warmUp(t.s, t.t, t.p);
          }
          await candidate.start();
          return candidate;
        },
        retry,
      );
      const strategyOf = new Map(instances.map((s) => [s.config.name, s.config.strategy]));
      const stillPaused: string[] = [];
      for (const i of engine.instances()) {
        const line = `${i.name}: ${strategyOf.get(i.name)} on ${i.symbol}, schedule ${i.schedule}, ${plan.mode}`;
        const held = startPaused.get(i.name);
        if (i.status === 'running') logger.info({ instance: i.name, status: i.status }, line);
        else if (i.status === 'paused' && held !== undefined) {
          stillPaused.push(i.name);
          logger.warn(
            { instance: i.name, status: i.status, reason: held.reason, source: held.source },
            `${line}: stays PAUSED (${held.reason}); resume it with /resume ${i.name} or POST /api/v1/instances/${i.name}/resume`,
          );
        } else logger.error({ instance: i.name, status: i.status }, `${line}: NOT RUNNING (${i.reason ?? i.status})`);
      }
      if (stillPaused.length > 0)
        logger.warn({ paused: stillPaused }, `paused since before this start: ${stillPaused.join(', ')}`);
      cleanup.push(() => engine.stop());
      const scheduler = options.scheduler ?? new ClockScheduler(logger, clock);
      // One operator layer for the control API, the chat commands, the page and the metrics.
      const actions = createOperatorActions({
        engine,
        store,
        clock,
        logger,
        killSwitchFile: env.KILL_SWITCH_FILE,
        configDir: env.CONFIG_DIR,
        strategiesDir: env.STRATEGIES_DIR,
        instances,
        exitWaitMs: env.RECONCILE_WINDOW_MS + 30_000,
      });
      const { version, revision } = installation();
      const operator: Operator = {
        read: createQueries({
          store,
          engine,
          now: () => clock.now(),
          wallNow: () => wallClock.now(),
          replay: clock instanceof ReplayClock ? () => ({ lagMs: clock.lagMs(), speed: clock.pace }) : undefined,
          killSwitchFile: env.KILL_SWITCH_FILE,
          jobs: () => withDecisions(scheduler.stats(), engine.decisionRuns()),
          prices: () => venue.recentPrices(),
          logs: (n) => logTail(logger)?.recent(n) ?? [],
          chartCandles: (symbol) => venue.chartCandles(symbol),
          daemon: {
            mode: plan.mode,
            venue: plan.mode === 'live' ? new URL(plan.baseUrl).host : 'simulated exchange (paper)',
            banner,
          },
        }),
        act: actions,
        build: { version, revision },
      };
      const scheduling = new DaemonScheduling(engine, scheduler, { ordersPoll: env.ORDERS_POLL, refresh: env.REFRESH });
      scheduling.start();
      if (clock instanceof ReplayClock) {
        // The recording's time stood at its first ticker while the daemon started: it goes on with the jobs.
        watchReplayLag(clock, store, logger);
        clock.resume();
      }
      // In the background: it may wait for its own order's outcome (the jobs reconcile it meanwhile).
      if (interrupted.size > 0) void actions.finishInterruptedExits();
      cleanup.push(async () => {
        await scheduler.stop(options.stopTimeoutMs ?? 10_000);
      });
      // Readiness, the metrics and log budgets are about the machine: wall-clock time (the venue's time is
      // the operator layer's, above).
      const now = () => wallClock.now();
      listeners.serveApi({
        operator,
        now,
        wall: wallClock,
        logger,
        token: env.API_TOKEN,
        metrics,
        metricsBalances: env.METRICS_BALANCES,
        probes,
      });
      probes.running({ ready: () => readinessNow({ read: operator.read, now, metrics }), jobs: operator.read.jobs });
      // The daemon runs: its start is recorded, and told from here on.
      const deleted = opened.started(runBegan);
      if (deleted.length > 0)
        logger.info(
          { deleted },
          `deleted ${deleted.length} old archive(s) (PAPER_ARCHIVES_KEPT=${env.PAPER_ARCHIVES_KEPT})`,
        );
      const notifications = notificationsFromEnv(env, {
        store,
        logger,
        mode: plan.mode,
        venueClock: clock,
        startedAt,
        runBegan,
      });
      notifications?.attachCommands(operator);
      logger.info({ ordersPoll: env.ORDERS_POLL, refresh: env.REFRESH, db: env.DB_PATH }, 'daemon running');
      const stopMs = options.stopTimeoutMs ?? 10_000;
      return new Daemon(
        plan,
        engine,
        setup,
        store,
        venue,
        scheduling,
        listeners,
        probes,
        logger,
        clock,
        stopMs,
        notifications,
        lock,
        lease,
      );
    } catch (err) {
      await undo().catch((closeErr: unknown) => logger.error({ err: closeErr }, 'closing after a failed start failed'));
      throw err;
    }
  }

  /**
   * Stops the jobs (running ones finish, bounded), the engine (onStop hooks), then the client (requests in
   * flight finish, bounded), the embedded exchange and the database. Idempotent.
   */
  stop(reason = 'stop'): Promise<void> {
    this.stopping ??= (async () => {
      this.logger.info({ reason }, 'stopping');
      try {
        // No request may steer a daemon that is stopping.
        this.probes.stopping();
        await this.listeners.close();
        await this.scheduling.stop(this.stopTimeoutMs);
        this.venue.flush(true);
        await atMost(this.setup.close(), this.stopTimeoutMs);
        this.store.events.record(wallClock.now(), undefined, 'daemon-stopped', { pid: process.pid, reason });
        await this.notifications?.stop(Math.min(NOTIFY_STOP_MS, this.stopTimeoutMs));
      } finally {
        this.lease.release();
        this.store.close();
        // Last: the next daemon may start only once this one has closed the journal.
        this.lock.release();
      }
      this.logger.info('stopped: database closed');
    })();
    return this.stopping;
  }
}
