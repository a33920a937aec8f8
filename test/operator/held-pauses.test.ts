/**
 * Which pauses a restart keeps (operator/actions.ts heldPauses): an instance whose last pause or resume is a pause
 * by the operator or by an exit, with its reason, source and time; not one resumed since, not one paused by its
 * strategy's failure (the restart loads the code again), not one never paused. Read from the real event log.
 */
import { describe, expect, it } from 'vitest';
import { heldPauses } from '../../src/operator/actions.js';
import { openStore } from '../../src/store/store.js';

describe('pauses a restart keeps', () => {
  it("keeps the operator's and the exit's, not a resumed one nor a strategy's failure", () => {
    const store = openStore({ path: ':memory:', clock: { now: () => 0 } });
    const { events } = store;
    events.record(1, 'op', 'paused', {
      reason: 'paused by the operator (api 127.0.0.1)',
      by: 'operator',
      source: 'api 127.0.0.1',
    });
    events.record(2, 'exit', 'paused', { reason: 'exit by the operator (telegram:1)', by: 'operator' });
    events.record(3, 'again', 'paused', { reason: 'paused by the operator (api)', by: 'operator', source: 'api' });
    events.record(4, 'again', 'resumed', {});
    events.record(5, 'failed', 'paused', { reason: 'onTick threw: boom' });
    events.record(6, 'back', 'resumed', {});
    events.record(7, 'back', 'paused', { reason: 'paused by the operator (cli)', by: 'operator', source: 'cli' });
    const held = heldPauses(store, ['op', 'exit', 'again', 'failed', 'back', 'never']);
    expect(Object.fromEntries(held)).toEqual({
      op: { reason: 'paused by the operator (api 127.0.0.1)', source: 'api 127.0.0.1', since: 1 },
      exit: { reason: 'exit by the operator (telegram:1)', since: 2 },
      back: { reason: 'paused by the operator (cli)', source: 'cli', since: 7 },
    });
    store.close();
  });
});
