/**
 * Hooks cannot hold the daemon hostage: every hook runs under its strategy file's hookTimeoutMs. One that
 * never settles, or settles long after its limit, is abandoned and its instance paused with the reason, while
 * the other instances, the orders poll and the refresh go on; its late result is ignored. A synchronous hook
 * cannot be preempted (JavaScript), so the daemon measures it and pauses the instance once it returns.
 */
import { describe, expect, it } from 'vitest';
import { readStatus } from '../../src/status/status-report.js';
import { Harness, instance, matching, strategy } from './harness.js';

let h: Harness;
/** An instance that asks for one LIMIT BUY far below the market on every tick. */
const steady = () =>
  instance(
    'steady',
    strategy({
      onTick(ctx) {
        ctx.limit('BUY', '50', '0.001');
      },
    }),
    { risk: { maxOpenOrders: 50 } },
  );

const stateOf = (name: string) => h.engine!.instances().find((i) => i.name === name)!;

describe('hook time limit', () => {
  it('abandons an onFill that never settles: its instance is paused, the poll, refresh and others go on', async () => {
    h = new Harness();
    h.price(100);
    let fills = 0;
    const hostage = strategy({
      onTick(ctx) {
        if (ctx.openOrders.length === 0 && ctx.position.quantity.isZero()) ctx.market('BUY', { quantity: '0.01' });
      },
      onFill() {
        fills++;
        return new Promise<void>(() => undefined); // never settles
      },
    });
    await h.start([instance('hostage', hostage, { hookTimeoutMs: 150 }), steady()]);
    await h.tick(100); // the market order is placed and filled; the poll delivers the fill: onFill hangs
    expect(fills).toBe(1);
    expect(stateOf('hostage')).toMatchObject({
      status: 'paused',
      reason: matching(/onFill did not settle within 150 ms/),
    });
    // Everything else goes on: ticks, orders, polls and the refresh.
    const before = h.sim.openOrders('k').length;
    await h.tick(100);
    await h.tick(100);
    await h.engine!.refresh();
    expect(h.sim.openOrders('k').length).toBe(before + 2);
    expect(stateOf('steady').status).toBe('running');
    const status = readStatus(h.store, { now: h.clock.now() });
    expect(status.instances.find((i) => i.instance === 'hostage')).toMatchObject({ state: 'paused' });
  });

  it('abandons an onTick that blocks for longer than its limit and ignores what it does when it ends', async () => {
    h = new Harness();
    h.price(100);
    let ended = false;
    const slow = strategy({
      async onTick(ctx) {
        await new Promise((r) => setTimeout(r, 400)); // long but finite
        ctx.limit('BUY', '60', '0.001', { tag: 'late' });
        ended = true;
      },
    });
    await h.start([instance('slow', slow, { hookTimeoutMs: 100 }), steady()]);
    await h.tick(100);
    expect(stateOf('slow')).toMatchObject({
      status: 'paused',
      reason: matching(/onTick did not settle within 100 ms/),
    });
    await h.tick(100);
    await new Promise((r) => setTimeout(r, 500));
    expect(ended).toBe(true);
    await h.tick(100);
    // The late intent was dropped: only the steady instance's orders are on the venue.
    expect(h.sim.openOrders('k').every((o) => String(o.price) === '50')).toBe(true);
    expect(h.sim.openOrders('k')).toHaveLength(3);
    expect(h.events('paused')).toHaveLength(1);
  });

  it('pauses, once it returns, a synchronous hook that blocked beyond its limit (measured by the daemon only)', async () => {
    const busy = () =>
      strategy({
        onTick() {
          const until = performance.now() + 150;
          while (performance.now() < until); // a busy loop: nothing can preempt it
        },
      });
    h = new Harness();
    h.price(100);
    await h.start([instance('busy', busy(), { hookTimeoutMs: 50 }), steady()], { measureHooks: true });
    await h.tick(100);
    expect(stateOf('busy')).toMatchObject({
      status: 'paused',
      reason: matching(/onTick blocked the daemon for \d+ ms, beyond its limit of 50 ms/),
    });
    expect(stateOf('steady').status).toBe('running');
    await h.close();
    // A backtest does not measure: its results must not depend on the machine's speed.
    h = new Harness();
    h.price(100);
    await h.start([instance('busy', busy(), { hookTimeoutMs: 50 })]);
    await h.tick(100);
    expect(stateOf('busy').status).toBe('running');
  });
});
