/**
 * The chat commands' operator (notify/chat-operator.ts) for this daemon: the control API's operator actions
 * (the same actions, idempotent, journaled as `operator` events with their source), the read model behind
 * `bot status`, and the balances as the engine last read them.
 */
import type { Engine } from '../engine/engine.js';
import { plain } from '../market/decimal.js';
import type { ActionResult, ChatOperator } from '../notify/chat-operator.js';
import type { Clock } from '../ports/clock.js';
import { buildStatusView } from '../status/status-view.js';
import type { Store } from '../store/store.js';
import { type ActionResult as OperatorResult, OperatorError, type OperatorActions } from './operator-actions.js';

/** An action's answer in words; an operator's refusal (unknown instance, wrong state) is an answer too. */
async function answer(subject: string, work: () => Promise<OperatorResult>): Promise<ActionResult> {
  try {
    const r = await work();
    return { ok: true, changed: r.changed, message: `${subject} ${r.outcome}` };
  } catch (err) {
    if (err instanceof OperatorError) return { ok: false, message: err.message };
    throw err;
  }
}

export function chatOperator(deps: {
  actions: OperatorActions;
  engine: Engine;
  store: Store;
  clock: Clock;
  killSwitchFile: string;
}): ChatOperator {
  const { actions, engine, store, clock, killSwitchFile } = deps;
  return {
    status: () => buildStatusView(store, { now: clock.now(), killSwitchFile }),
    balances: () =>
      Promise.resolve(
        engine
          .balances()
          .filter((b) => !b.free.isZero() || !b.locked.isZero())
          .map((b) => ({ asset: b.asset, free: plain(b.free), locked: plain(b.locked) })),
      ),
    pause: (name, source) => answer(name, () => actions.pauseInstance(name, { source })),
    resume: (name, source) => answer(name, () => actions.resumeInstance(name, { source })),
    setKillSwitch: (on, source) => answer('kill switch', () => actions.setKillSwitch(on, { source })),
  };
}
