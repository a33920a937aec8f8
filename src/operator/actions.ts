/**
 * What an operator may do to a running daemon: pause and resume an instance, cancel one order, exit an
 * instance's position, stop-buy, flip the kill switch, reload the strategy files, clear an authentication
 * halt. Plain async functions with stable error codes, so the control API and chat commands call the same
 * code. Each is idempotent (doing it twice changes nothing the second time, and says so) and journaled as an
 * `operator` event: what, when, from where, outcome.
 */
import { mkdirSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { loadStrategyFiles, type StrategyInstance } from '../config/loader.js';
import { expandPairLists } from '../config/strategy-file.js';
import { BotError, ConfigError } from '../errors.js';
import type { Engine, PauseCause } from '../engine/engine.js';
import { isHeldExit } from '../engine/exits/exit-orders.js';
import { type ExitOrder, type ExitResult, exitResultJson } from '../engine/exits/position-exit.js';
import { D, type Dec, plain } from '../market/decimal.js';
import { failureMessage } from '../ports/venue-errors.js';
import type { Logger } from '../ops/logger.js';
import type { Clock } from '../ports/clock.js';
import type { Store } from '../store/store.js';
import type { OrderRow } from '../store/order-journal.js';

export type OperatorErrorCode =
  /** No instance of that name runs in this daemon. */
  | 'E_UNKNOWN_INSTANCE'
  /** No order of that id in the journal. */
  | 'E_UNKNOWN_ORDER'
  /** The daemon is starting or stopping: nothing can be steered now. */
  | 'E_NOT_RUNNING'
  /** The instance's state does not allow it (refused at start, stopped; only a paused one resumes). */
  | 'E_INSTANCE_STATE'
  /** The order has no exchange id yet (its outcome is being reconciled), or the venue cannot cancel. */
  | 'E_NOT_CANCELLABLE'
  /** The venue refused the cancel or did not answer. */
  | 'E_CANCEL_FAILED'
  /** A strategy file is invalid: nothing was changed; `problems` lists every problem. */
  | 'E_RELOAD_INVALID'
  /** The files add, remove or move an instance (strategy, symbol, schedule): that needs a restart. */
  | 'E_RELOAD_NEEDS_RESTART'
  /** The signed read still fails: the halt stays. */
  | 'E_STILL_UNAUTHORIZED'
  /** The kill-switch file could not be written or removed. */
  | 'E_KILL_SWITCH_FILE'
  /** The exit could not sell: a brake, a rule, the balance or a failed cancel (`details` says what was done). */
  | 'E_EXIT_REFUSED'
  /** A forced entry was refused: a brake, a protection, a rule, a risk limit, the balance, or no amount to spend. */
  | 'E_ENTRY_REFUSED';

export class OperatorError extends BotError {
  declare readonly code: OperatorErrorCode;
  readonly problems: readonly string[];
  /** What was done before the refusal (an exit's cancels). */
  readonly details: Record<string, unknown> | undefined;

  constructor(
    code: OperatorErrorCode,
    message: string,
    options: { problems?: readonly string[]; cause?: unknown; details?: Record<string, unknown> } = {},
  ) {
    super(code, message, { cause: options.cause });
    this.problems = options.problems ?? [];
    this.details = options.details;
  }
}

/** Who asked: recorded with the action (`api 127.0.0.1`, `telegram 12345`). */
export interface ActionSource {
  source: string;
}

export interface ActionResult {
  action: string;
  /** False when the action found things already as asked (idempotent repeat). */
  changed: boolean;
  /** In words: "paused", "already paused", "cancelled", … */
  outcome: string;
  /** Per-action details: orders cancelled with a pause, instances reconfigured by a reload. */
  details?: Record<string, unknown>;
}

/** An action as it starts: what, on which instance (when it acts on one), who asked. */
export interface ActionStart {
  action: string;
  instance: string | undefined;
  source: string;
}

/** Told as each action starts; the function it returns is called as the action ends (its row recorded). */
export type ActionObserver = (start: ActionStart) => () => void;

/** The start of an operator's pause reason, and of an operator's exit's: the operator's doing, not a failure. */
export const OPERATOR_PAUSE = 'paused by the operator';
export const OPERATOR_EXIT = 'exit by the operator';

/** Whether an instance was paused by an operator's pause or exit (not by a failure). */
export const pausedByOperator = (reason: string): boolean =>
  reason.startsWith(OPERATOR_PAUSE) || reason.startsWith(OPERATOR_EXIT);

export interface OperatorActions {
  /** Follows every action from its start to its end (the notifier: an action told once). */
  observe(observer: ActionObserver): void;
  pauseInstance(name: string, by: ActionSource & { cancelOrders?: boolean }): Promise<ActionResult>;
  resumeInstance(name: string, by: ActionSource): Promise<ActionResult>;
  /** `id`: the journal's local id, or the exchange's id. */
  cancelOrder(id: string, by: ActionSource): Promise<ActionResult>;
  setKillSwitch(on: boolean, by: ActionSource): Promise<ActionResult>;
  /** No new BUY orders while on; exits and protective SELLs still go out. */
  setStopBuy(on: boolean, by: ActionSource): Promise<ActionResult>;
  /** Pauses the instance, cancels its open orders and sells its position less dust (MARKET, or LIMIT at `price`). */
  exitPosition(name: string, order: ExitOrder, by: ActionSource): Promise<ActionResult>;
  /**
   * Opens a position for a running instance (Freqtrade's forcebuy): a BUY at MARKET, or a LIMIT at `price`,
   * spending `quoteAmount` (default: the instance's params.quoteAmount), through every brake a strategy's entry
   * meets; the declared exits take the position as they take any entry.
   */
  forceEntry(name: string, order: ExitOrder, quoteAmount: Dec | undefined, by: ActionSource): Promise<ActionResult>;
  /** Finishes the exits a crash interrupted (asked for, never answered); called once after the engine starts. */
  finishInterruptedExits(): Promise<void>;
  reloadStrategyFiles(by: ActionSource): Promise<ActionResult>;
  clearAuthHalt(by: ActionSource): Promise<ActionResult>;
}

export interface OperatorDeps {
  engine: Engine;
  store: Store;
  clock: Clock;
  logger: Logger;
  killSwitchFile: string;
  configDir: string;
  strategiesDir: string | undefined;
  /** The strategy files the engine runs now (replaced by each successful reload). */
  instances: readonly StrategyInstance[];
  /**
   * How long an interrupted exit waits at start for an earlier order's outcome (the reconcile window and a
   * margin), in the clock's time (the venue's: the data's time on paper on recordings).
   */
  exitWaitMs?: number;
}

const EXIT_ACTION = 'exit';

/** The tag of a forced entry's order: its trades are told apart by entry tag. */
export const FORCED_ENTRY_TAG = 'force-entry';

/**
 * Exits asked for whose answer was never journaled (the daemon died in the middle): instance to the request's
 * data. The engine starts these instances paused, and `finishInterruptedExits` completes them.
 */
export function interruptedExits(store: Store): Map<string, Record<string, unknown>> {
  const pending = new Map<string, Record<string, unknown>>();
  for (const e of store.events.list({ kinds: ['exit-requested', 'operator'] })) {
    if (e.kind === 'exit-requested' && e.instance !== undefined) pending.set(e.instance, e.data);
    else if (e.kind === 'operator' && e.data.action === EXIT_ACTION && typeof e.data.instance === 'string')
      pending.delete(e.data.instance);
  }
  return pending;
}

/**
 * The pauses that hold across a restart: each instance whose last pause or resume is a pause by the operator
 * (or by an exit), with its reason, who asked and since when (a strategy's failure is not kept: the restart
 * loads its code again). One index seek per instance and kind (events.latest).
 */
export function heldPauses(store: Store, names: readonly string[]): Map<string, PauseCause & { since: number }> {
  const held = new Map<string, PauseCause & { since: number }>();
  for (const name of names) {
    const last = store.events.latest(['paused', 'resumed'], name);
    if (last?.kind !== 'paused' || last.data.by !== 'operator' || typeof last.data.reason !== 'string') continue;
    const source = typeof last.data.source === 'string' ? last.data.source : undefined;
    held.set(name, { reason: last.data.reason, ...(source === undefined ? {} : { source }), since: last.time });
  }
  return held;
}

const exitOrderOf = (data: Record<string, unknown>): ExitOrder =>
  data.type === 'LIMIT' && typeof data.price === 'string'
    ? { type: 'LIMIT', price: new D(data.price) }
    : { type: 'MARKET' };

/** The exit order as sent: a LIMIT at its price on the tick (a SELL's rounds up from the price asked). */
function sentText(row: OrderRow): string {
  return row.type === 'LIMIT' ? `LIMIT at ${row.price ?? '?'}` : row.type;
}

/** A protective order in words: `a-5 (OCO SELL 0.005, take-profit 21000, stop 19500 limit 19400)`. */
function protectionText(row: OrderRow): string {
  const legs =
    row.type === 'OCO'
      ? `, take-profit ${row.price ?? '?'}, stop ${row.stopPrice ?? '?'} limit ${row.limitPrice ?? '?'}`
      : row.type === 'STOP_LIMIT'
        ? `, stop ${row.stopPrice ?? '?'} limit ${row.price ?? '?'}`
        : row.price === undefined
          ? ''
          : ` at ${row.price}`;
  return `${row.localId} (${row.type} SELL ${row.quantity ?? '?'}${legs})`;
}

/** What a refused exit did and left: what it cancelled, what it put back, what protects the position now. */
function afterRefusal(result: ExitResult): string {
  const parts: string[] = [];
  if (result.cancelled.length > 0) parts.push(`cancelled ${result.cancelled.join(', ')}`);
  if (result.restored.length > 0) parts.push(`put back ${result.restored.join(', ')}`);
  parts.push(
    result.position.isZero()
      ? 'the instance holds nothing'
      : result.protectedBy.length > 0
        ? `the position is protected by ${result.protectedBy.map(protectionText).join(', ')}`
        : 'no stop protects the position on the exchange now',
  );
  return `; ${parts.join('; ')}`;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Why reloaded files cannot be applied to the running instances without a restart (empty: they can). */
function restartNeeds(running: readonly StrategyInstance[], loaded: readonly StrategyInstance[]): string[] {
  const before = new Map(running.map((i) => [i.config.name, i.config]));
  const after = new Map(loaded.map((i) => [i.config.name, i.config]));
  const problems: string[] = [];
  for (const [name, config] of after) {
    const old = before.get(name);
    if (old === undefined) {
      problems.push(`${name}: a new enabled instance (restart to start it)`);
      continue;
    }
    for (const key of ['strategy', 'symbol', 'schedule'] as const)
      if (old[key] !== config[key])
        problems.push(`${name}: ${key} changed from ${old[key]} to ${config[key]} (restart to apply)`);
    if (!sameJson(old.pairlist, config.pairlist)) problems.push(`${name}: pairlist changed (restart to apply)`);
  }
  for (const name of before.keys())
    if (!after.has(name)) problems.push(`${name}: removed or disabled (restart to stop it)`);
  return problems;
}

export function createOperatorActions(deps: OperatorDeps): OperatorActions {
  const { engine, store, clock, logger } = deps;
  let running = deps.instances;
  const log = logger.child({ component: 'operator' });
  const observers: ActionObserver[] = [];

  /** Runs one action and journals it, successful or not. */
  async function journaled(
    action: string,
    subject: Record<string, unknown>,
    by: ActionSource,
    work: () => Promise<ActionResult> | ActionResult,
  ): Promise<ActionResult> {
    const instance = typeof subject.instance === 'string' ? subject.instance : undefined;
    const ends = observers.map((o) => o({ action, instance, source: by.source }));
    try {
      const result = await work();
      store.events.record(clock.now(), undefined, 'operator', {
        action,
        ...subject,
        outcome: result.outcome,
        changed: result.changed,
        source: by.source,
        ...(result.details === undefined ? {} : { details: result.details }),
      });
      log.warn(
        { action, ...subject, source: by.source, changed: result.changed },
        `operator: ${action} ${result.outcome}`,
      );
      return result;
    } catch (err) {
      const code = err instanceof BotError ? err.code : 'E_UNEXPECTED';
      const message = err instanceof Error ? err.message : String(err);
      store.events.record(clock.now(), undefined, 'operator', {
        action,
        ...subject,
        outcome: 'failed',
        error: { code, message },
        source: by.source,
      });
      log.warn({ action, ...subject, source: by.source, code }, `operator: ${action} failed: ${message}`);
      throw err;
    } finally {
      for (const end of ends) end();
    }
  }

  function instanceNamed(name: string) {
    const instance = engine.instances().find((i) => i.name === name);
    if (instance === undefined)
      throw new OperatorError('E_UNKNOWN_INSTANCE', `no instance named ${JSON.stringify(name)} runs in this daemon`);
    if (!engine.running) throw new OperatorError('E_NOT_RUNNING', 'the daemon is not running (starting or stopping)');
    return instance;
  }

  async function cancelActive(localIds: readonly string[]) {
    const cancelled: string[] = [];
    const failed: { order: string; code: string; message: string }[] = [];
    for (const id of localIds) {
      const result = await engine.cancelOrder(id);
      if (result === undefined || result.ok) cancelled.push(id);
      else failed.push({ order: id, code: result.code, message: result.message });
    }
    return { cancelled, failed };
  }

  /**
   * One exit: the request is recorded first (so a crash in the middle is finished at the next start), then the
   * engine does it under its lock; the answer says what was sent. `patient`: wait for an earlier order's
   * outcome rather than refuse (an interrupted exit at start, whose own order may be that one).
   */
  function exit(name: string, order: ExitOrder, by: ActionSource, patient: boolean): Promise<ActionResult> {
    const subject = {
      instance: name,
      type: order.type,
      ...(order.type === 'LIMIT' ? { price: plain(order.price) } : {}),
    };
    return journaled(EXIT_ACTION, subject, by, async () => {
      instanceNamed(name);
      store.events.record(clock.now(), name, 'exit-requested', { ...subject, source: by.source });
      const deadline = clock.now() + (patient ? (deps.exitWaitMs ?? 90_000) : 0);
      for (;;) {
        const result = await engine.exitPosition(name, order, `${OPERATOR_EXIT} (${by.source})`);
        if (result === undefined)
          return instanceNamed(name) && { action: EXIT_ACTION, changed: false, outcome: 'no such instance' };
        const details = exitResultJson(result);
        if (result.waiting && clock.now() < deadline) {
          // Waited on the venue's clock, as the deadline and the reconciler's window are (a 60x replay: 60x shorter).
          await clock.sleep(2_000);
          continue;
        }
        if (result.refused !== undefined)
          throw new OperatorError(
            'E_EXIT_REFUSED',
            `exit of ${name} refused: ${result.refused}${afterRefusal(result)}`,
            {
              details,
            },
          );
        const dust = result.dust.isZero() ? '' : ` (dust ${plain(result.dust)} left)`;
        const cancelled = result.cancelled.length > 0 ? `; cancelled ${result.cancelled.join(', ')}` : '';
        if (result.sent !== undefined) {
          const s = result.sent;
          return {
            action: EXIT_ACTION,
            changed: true,
            outcome: `sent ${sentText(s)} SELL ${s.quantity ?? '?'} ${s.symbol} as ${s.localId} (${s.status})${dust}${cancelled}`,
            details,
          };
        }
        if (result.working.length > 0)
          return {
            action: EXIT_ACTION,
            changed: result.cancelled.length > 0,
            outcome: `already exiting: ${result.working.map((w) => w.localId).join(', ')} working${dust}${cancelled}`,
            details,
          };
        return {
          action: EXIT_ACTION,
          changed: result.cancelled.length > 0,
          outcome: `nothing to sell: flat${dust}${cancelled}`,
          details,
        };
      }
    });
  }

  return {
    observe: (observer) => {
      observers.push(observer);
    },

    pauseInstance: (name, by) =>
      journaled('pause', { instance: name }, by, async () => {
        instanceNamed(name);
        const paused = engine.pauseInstance(name, `${OPERATOR_PAUSE} (${by.source})`, by.source);
        const current = instanceNamed(name);
        if (!paused && current.status !== 'paused')
          throw new OperatorError('E_INSTANCE_STATE', `instance ${name} is ${current.status}, not running`);
        const outcome = paused ? 'paused' : 'already paused';
        if (by.cancelOrders !== true) return { action: 'pause', changed: paused, outcome };
        // The stop the engine holds on the exchange for the declared exits stays: a pause stops the strategy's
        // decisions, never the position's protection (invariant 13).
        const open = store.orders
          .activeForInstance(name)
          .filter((o) => !isHeldExit(o))
          .map((o) => o.localId);
        const details = await cancelActive(open);
        return { action: 'pause', changed: paused || details.cancelled.length > 0, outcome, details };
      }),

    resumeInstance: (name, by) =>
      journaled('resume', { instance: name }, by, () => {
        const current = instanceNamed(name);
        if (current.status === 'running') return { action: 'resume', changed: false, outcome: 'already running' };
        if (current.status !== 'paused')
          throw new OperatorError(
            'E_INSTANCE_STATE',
            `instance ${name} is ${current.status}: only a paused instance resumes`,
            {
              problems: current.reason === undefined ? [] : [current.reason],
            },
          );
        engine.resumeInstance(name);
        return { action: 'resume', changed: true, outcome: 'resumed' };
      }),

    cancelOrder: (id, by) =>
      journaled('cancel', { order: id }, by, async () => {
        const row = store.orders.get(id) ?? store.orders.byExchangeId(id);
        if (row === undefined)
          throw new OperatorError('E_UNKNOWN_ORDER', `no order ${JSON.stringify(id)} in the journal`);
        if (!engine.running)
          throw new OperatorError('E_NOT_RUNNING', 'the daemon is not running (starting or stopping)');
        const result = await engine.cancelOrder(row.localId);
        if (result === undefined)
          return {
            action: 'cancel',
            changed: false,
            outcome: `already ${store.orders.get(row.localId)?.status ?? row.status}`,
          };
        if (!result.ok) {
          const code = result.code === 'E_NOT_CANCELLABLE' ? 'E_NOT_CANCELLABLE' : 'E_CANCEL_FAILED';
          const why =
            code === 'E_NOT_CANCELLABLE'
              ? `order ${row.localId} cannot be cancelled now (no exchange id yet, or the venue cannot cancel)`
              : `cancel of order ${row.localId} ${result.outcome}: ${result.message}`;
          throw new OperatorError(code, why);
        }
        return {
          action: 'cancel',
          changed: true,
          outcome: `cancelled (now ${result.status})`,
          details: { localId: row.localId },
        };
      }),

    setStopBuy: (on, by) =>
      journaled('stop-buy', { on }, by, () => {
        if (!engine.running)
          throw new OperatorError('E_NOT_RUNNING', 'the daemon is not running (starting or stopping)');
        const changed = engine.setStopBuy(on, by.source);
        return { action: 'stop-buy', changed, outcome: `${changed ? '' : 'already '}${on ? 'on' : 'off'}` };
      }),

    exitPosition: (name, order, by) => exit(name, order, by, false),

    forceEntry: (name, order, quoteAmount, by) => {
      const subject = {
        instance: name,
        type: order.type,
        ...(order.type === 'LIMIT' ? { price: plain(order.price) } : {}),
        ...(quoteAmount === undefined ? {} : { quoteAmount: plain(quoteAmount) }),
      };
      return journaled('force-entry', subject, by, async () => {
        instanceNamed(name);
        const declared = running.find((i) => i.config.name === name)?.config.params.quoteAmount;
        const amount =
          quoteAmount ?? (typeof declared === 'string' || typeof declared === 'number' ? new D(declared) : undefined);
        if (amount === undefined || !amount.gt(0))
          throw new OperatorError(
            'E_ENTRY_REFUSED',
            `force entry of ${name}: say how much to spend (quoteAmount): the instance declares no params.quoteAmount`,
          );
        const outcome = await engine.forceEntry(name, order, amount, FORCED_ENTRY_TAG);
        if (outcome === undefined)
          throw new OperatorError('E_UNKNOWN_INSTANCE', `no instance named ${JSON.stringify(name)}`);
        if (!outcome.ok)
          throw new OperatorError('E_ENTRY_REFUSED', `force entry of ${name} refused: ${outcome.reason}`);
        const row = outcome.row;
        if (row.status === 'REJECTED' || row.status === 'NOT_SENT')
          throw new OperatorError(
            'E_ENTRY_REFUSED',
            `force entry of ${name}: the venue refused ${row.localId}: ${row.rejectReason ?? row.status}`,
          );
        const what =
          row.type === 'LIMIT'
            ? `LIMIT BUY ${row.quantity ?? '?'} at ${row.price ?? '?'}`
            : `MARKET BUY for ${row.quoteAmount ?? '?'}`;
        return {
          action: 'force-entry',
          changed: true,
          outcome: `sent ${what} ${row.symbol} as ${row.localId} (${row.status})`,
          details: { localId: row.localId, status: row.status },
        };
      });
    },

    finishInterruptedExits: async () => {
      for (const [name, data] of interruptedExits(store)) {
        if (!engine.instances().some((i) => i.name === name)) continue;
        const source = `restart (interrupted exit asked by ${typeof data.source === 'string' ? data.source : 'unknown'})`;
        await exit(name, exitOrderOf(data), { source }, true).catch((err: unknown) =>
          log.error({ err, instance: name }, 'an interrupted exit could not be finished'),
        );
      }
    },

    setKillSwitch: (on, by) =>
      journaled('kill-switch', { on }, by, () => {
        const file = deps.killSwitchFile;
        const present = existsSync(file);
        try {
          if (on && !present) {
            mkdirSync(dirname(file), { recursive: true });
            writeFileSync(
              file,
              `kill switch set by the operator (${by.source}) at ${new Date(clock.now()).toISOString()}\n`,
            );
          } else if (!on && present) rmSync(file, { force: true });
        } catch (err) {
          throw new OperatorError(
            'E_KILL_SWITCH_FILE',
            `cannot ${on ? 'write' : 'remove'} ${file}: ${(err as Error).message}`,
            {
              cause: err,
            },
          );
        }
        // Recorded now rather than at the next poll; a no-op when the engine is not running its jobs.
        if (engine.running) engine.checkKillSwitch();
        const changed = on !== present;
        return { action: 'kill-switch', changed, outcome: `${changed ? '' : 'already '}${on ? 'on' : 'off'}` };
      }),

    reloadStrategyFiles: (by) =>
      journaled('reload', {}, by, async () => {
        if (!engine.running)
          throw new OperatorError('E_NOT_RUNNING', 'the daemon is not running (starting or stopping)');
        let loaded: StrategyInstance[];
        try {
          // A pair list's file on the pairs it runs on (its instances are made at start, from the market's pairs).
          loaded = (await loadStrategyFiles(deps.configDir, { strategiesDir: deps.strategiesDir }))
            .filter((i) => i.config.enabled)
            .flatMap((i) =>
              expandPairLists(
                [i],
                running.filter((r) => r.config.group === i.config.group).map((r) => r.config.symbol),
              ),
            );
        } catch (err) {
          if (err instanceof ConfigError)
            throw new OperatorError('E_RELOAD_INVALID', `strategy files invalid: nothing changed`, {
              problems: err.problems,
              cause: err,
            });
          throw err;
        }
        const needs = restartNeeds(running, loaded);
        if (needs.length > 0)
          throw new OperatorError('E_RELOAD_NEEDS_RESTART', 'the strategy files need a restart: nothing changed', {
            problems: needs,
          });
        const before = new Map(running.map((i) => [i.config.name, i]));
        const changed = loaded.filter((i) => {
          const old = before.get(i.config.name);
          return (
            old === undefined ||
            !sameJson(old.config.params, i.config.params) ||
            !sameJson(old.config.risk, i.config.risk) ||
            !sameJson(old.config.exits, i.config.exits) ||
            !sameJson(old.config.protections, i.config.protections)
          );
        });
        const exits = await engine.reconfigure(changed);
        running = loaded;
        const names = changed.map((i) => i.config.name);
        return {
          action: 'reload',
          changed: names.length > 0,
          outcome: names.length > 0 ? `reconfigured ${names.join(', ')}` : 'nothing changed',
          details: { reconfigured: names, exitsChanged: exits },
        };
      }),

    clearAuthHalt: (by) =>
      journaled('halt-clear', {}, by, async () => {
        if (!engine.running)
          throw new OperatorError('E_NOT_RUNNING', 'the daemon is not running (starting or stopping)');
        if (engine.brakes().halted === undefined)
          return { action: 'halt-clear', changed: false, outcome: 'not halted' };
        try {
          await engine.clearAuthHalt();
        } catch (err) {
          throw new OperatorError('E_STILL_UNAUTHORIZED', `the signed read still fails: ${failureMessage(err)}`, {
            cause: err,
          });
        }
        return { action: 'halt-clear', changed: true, outcome: 'cleared: orders allowed again' };
      }),
  };
}
