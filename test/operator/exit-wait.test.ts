/**
 * An exit interrupted by a crash whose own SELL's outcome is unknown waits, at the next start, for the
 * reconciler's answer: on the venue's clock (the data's time on paper on recordings, so a 60x replay waits 60x
 * less wall time), never on the wall's. Driven on a virtual clock: nothing moves unless the test moves the
 * venue's time, and everything the exit waits for happens at a venue time the test chose.
 */
import { describe, expect, it } from 'vitest';
import { firstTick, Harness, instance, operatorActions, venueError } from '../engine/harness.js';

let h: Harness;
const WINDOW_MS = 10_000;
const EXIT_WAIT_MS = WINDOW_MS + 30_000;

/** A position bought at the first tick, then an exit whose SELL was journaled and its answer lost. */
async function interruptedExit(windowMs = WINDOW_MS) {
  h = new Harness();
  const spec = instance(
    'a',
    firstTick((ctx) => ctx.market('BUY', { quantity: '0.01' }, { tag: 'entry' })),
  );
  const engine = await h.start([spec], { reconcileWindowMs: windowMs, clockSkewMs: 0 });
  await h.tick(20_000);
  await h.tick(20_000);
  h.venue.createFault = { when: 'before-place', error: venueError('outcome-unknown', 'E_TIMEOUT') };
  // What the operator layer records first; the crash comes before its answer.
  h.store.events.record(h.clock.now(), 'a', 'exit-requested', { instance: 'a', type: 'MARKET', source: 'api' });
  const first = await engine.exitPosition('a', { type: 'MARKET' }, 'exit by the operator (api)');
  expect(first?.sent?.status).toBe('UNKNOWN');
  const actions = operatorActions(h, engine, { exitWaitMs: EXIT_WAIT_MS });
  let settled = false;
  const started = h.clock.now();
  const finishing = actions.finishInterruptedExits().then(() => (settled = true));
  return { engine, started, finishing, settled: () => settled };
}

/**
 * Lets every pending promise run. The in-process venue and the store answer within promise jobs, so an exit
 * that waits on nothing but the venue's clock has answered by then; one that slept on the wall clock (its
 * two-second pause between looks) has not.
 */
const drain = () => new Promise((resolve) => setTimeout(resolve, 20));

const exitAnswers = () =>
  h.store.events
    .list({ kinds: ['operator'] })
    .filter((e) => e.data.action === 'exit')
    .map((e) => ({ time: e.time, outcome: e.data.outcome as string }));

describe('an interrupted exit waiting for its SELL outcome', () => {
  it('sells once the reconciler, on the venue clock, finds the lost SELL never placed', async () => {
    const run = await interruptedExit();
    await drain();
    expect(run.settled()).toBe(false);
    expect(exitAnswers()).toEqual([]);
    // Past the reconcile window in the venue's time, an orders poll finds the SELL was never placed.
    await h.clock.advanceBy(WINDOW_MS + 1_000);
    await run.engine.pollOrders();
    expect(run.settled()).toBe(false);
    // The exit's next look, two seconds of venue time later, sells: nothing more than the venue's time moving.
    await h.clock.advanceBy(2_000);
    await drain();
    expect(run.settled()).toBe(true);
    const answers = exitAnswers();
    expect(answers).toHaveLength(1);
    expect(answers[0]?.outcome).toMatch(/^sent MARKET SELL 0\.0099\d* BTCUSDT as /);
    expect(answers[0]!.time).toBeLessThan(run.started + EXIT_WAIT_MS);
  });

  it('gives up when the venue clock passes exitWaitMs, not before, whatever the wall clock did', async () => {
    // A reconcile window longer than the wait: the SELL's outcome stays unknown throughout.
    const run = await interruptedExit(10 * EXIT_WAIT_MS);
    await h.clock.advanceBy(EXIT_WAIT_MS - 2_001);
    await drain();
    expect(run.settled()).toBe(false);
    await h.clock.advanceBy(4_000);
    await drain();
    expect(run.settled()).toBe(true);
    const answers = exitAnswers();
    expect(answers.map((a) => a.outcome)).toEqual([expect.stringMatching(/^already exiting: /) as string]);
    expect(answers[0]!.time).toBeGreaterThanOrEqual(run.started + EXIT_WAIT_MS);
  });
});
