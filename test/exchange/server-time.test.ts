/**
 * Issue 28, time and authentication: with EXCHANGE_SERVER_TIME (serverTimeOffset) the request timestamp
 * follows the exchange's clock even when this machine's clock is 120 s ahead or 30 s behind, also when it
 * steps while the client runs. Against the real simulated exchange's server (its timestamp window ±10 s on
 * the system clock); the client's clock is the skewed one.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ExchangeClient } from '../../src/exchange/client.js';
import { MatchingEngine } from '../../src/sim/matching-engine.js';
import { DEMO_CREDENTIALS, type SimServer, startSimServer } from '../../src/sim/sim-server.js';
import { wallClock } from '../../src/clocks/wall-clock.js';

let sim: SimServer;
beforeAll(async () => {
  sim = await startSimServer({ engine: new MatchingEngine({ clock: wallClock }) });
  sim.engine.onPrice('BTCUSDT', 20_000, Date.now());
});
afterAll(() => sim.close());

/** A client whose clock is `skew.ms` off the system's (changeable while it runs). */
function skewedClient(skew: { ms: number }, serverTimeOffset: boolean): ExchangeClient {
  return new ExchangeClient({
    baseUrl: sim.url,
    apiKey: DEMO_CREDENTIALS.apiKey,
    apiSecret: DEMO_CREDENTIALS.apiSecret,
    clock: { now: () => Date.now() + skew.ms },
    serverTimeOffset,
    rateLimit: false,
  });
}

for (const ms of [120_000, -30_000]) {
  it(`follows the server's time with a clock ${ms / 1000} s off: reads and an order go through`, async () => {
    const client = skewedClient({ ms }, true);
    // The first signed request goes out on the skewed clock: its 401 carries the server's time, and it is
    // signed again once with the corrected timestamp.
    await expect(client.balance()).resolves.toBeDefined();
    const order = await client.createOrder({
      symbol: 'BTCUSDT',
      side: 'BUY',
      type: 'LIMIT',
      price: '10000',
      quantity: '0.001',
    });
    expect(order.displayingId).toBeTruthy();
  });
}

it('follows a clock step while running: the next read is signed again with the new offset', async () => {
  const skew = { ms: 0 };
  const client = skewedClient(skew, true);
  await client.openOrders('BTCUSDT');
  skew.ms = 120_000;
  await expect(client.openOrders('BTCUSDT')).resolves.toBeInstanceOf(Array);
  skew.ms = 0; // set right again: the learned offset is now wrong by 120 s, and corrected the same way
  await expect(client.openOrders('BTCUSDT')).resolves.toBeInstanceOf(Array);
});

it('without the setting, a 401 on a skewed clock says how far off the clock was', async () => {
  const client = skewedClient({ ms: 120_000 }, false);
  const err = await client.balance().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toMatchObject({ code: 'E_AUTH', meaning: 'authentication' });
  const skew = (err as { clockSkewMs?: number }).clockSkewMs;
  expect(skew).toBeGreaterThan(118_000);
  expect(skew).toBeLessThan(122_000);
  expect((err as Error).message).toMatch(/timestamp was 12\d s ahead of the exchange’s clock/);
});

it('a 401 for a wrong secret is not put down to the clock', async () => {
  const client = new ExchangeClient({
    baseUrl: sim.url,
    apiKey: DEMO_CREDENTIALS.apiKey,
    apiSecret: 'not-the-secret',
    serverTimeOffset: true,
    rateLimit: false,
  });
  await expect(client.balance()).rejects.toMatchObject({ code: 'E_AUTH', clockSkewMs: undefined });
});
