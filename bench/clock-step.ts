/**
 * Issue 36's clock step, measured (no assertions): the real engine trades on the in-process matching engine with
 * the daemon's cadence (a market cycle and an orders poll every 5 s), a ladder of resting orders on a random
 * walk of the price around 100 (a move a second), and this machine's clock is stepped forward (default +120 s, `--step-s N`, `--step-s=-120`
 * for back) 10 minutes in. Printed: every fill's delay from the exchange making it to the journal recording it,
 * on the exchange's clock (longest and median, before and after the step), the fills never recorded, and the
 * longest stretch without an order placed after the step. Virtual clocks: the figures do not depend on the
 * machine's load. `npm run bench:clock-step [-- --step-s 120 --hours 2 --seed 7]`.
 */
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { VirtualClock } from '../src/clocks/virtual-clock.js';
import { onePairInstance } from '../src/config/strategy-file.js';
import { Engine } from '../src/engine/engine.js';
import { silentLogger } from '../src/ops/logger.js';
import type { Clock } from '../src/ports/clock.js';
import { MatchingEngine } from '../src/sim/matching-engine.js';
import { mulberry32 } from '../src/sim/prng.js';
import { openStore } from '../src/store/store.js';
import { defineStrategy } from '../src/strategy/api.js';
import { InProcessVenue } from '../src/venues/in-process-venue.js';

const { values } = parseArgs({
  options: {
    'step-s': { type: 'string', default: '120' },
    hours: { type: 'string', default: '2' },
    seed: { type: 'string', default: '7' },
  },
});
const STEP_MS = Number(values['step-s']) * 1000;
const HOURS = Number(values.hours);
if (!Number.isFinite(STEP_MS) || !(HOURS > 0)) {
  console.error(`bench:clock-step: --step-s must be a number and --hours positive`);
  process.exit(2);
}
const T0 = Date.UTC(2024, 0, 2, 10, 0, 0);
const CADENCE_MS = 5_000;
const STEP_AT = T0 + 10 * 60_000;
const SYMBOL = 'BTCUSDT';

/**
 * A BUY 0.2 % under the price (cancelled once the price is 0.6 % above it) and, holding, a SELL 0.2 % over
 * it: each placed again once the last one is done.
 */
const ladder = defineStrategy({
  name: 'ladder',
  params: z.object({}),
  onTick(ctx) {
    const price = ctx.price;
    if (price === undefined) return;
    const working = ctx.openOrders;
    const buy = working.find((o) => o.side === 'BUY');
    if (buy === undefined) ctx.limit('BUY', price.mul('0.998'), '0.01', { tag: 'buy' });
    else if (buy.status === 'OPEN' && buy.price?.lt(price.mul('0.994')) === true) ctx.cancel(buy);
    const held = ctx.position.quantity.toDecimalPlaces(5, 1);
    if (held.gte('0.005') && !working.some((o) => o.side === 'SELL'))
      ctx.limit('SELL', price.mul('1.002'), held, { tag: 'sell' });
  },
});

const venueClock = new VirtualClock(T0);
let aheadMs = 0;
const engineClock: Clock = {
  now: () => venueClock.now() + aheadMs,
  setTimer: (fire, ms) => venueClock.setTimer(fire, ms),
  sleep: (ms, signal) => venueClock.sleep(ms, signal),
  cron: (expression, fire) => venueClock.cron(expression, fire),
  pace: undefined,
  awaitsFirings: true,
};
const sim = new MatchingEngine({ clock: venueClock });
sim.createAccount({ apiKey: 'k', balances: { USDT: '1000000', BTC: '2' } });
let price = 100;
sim.onPrice(SYMBOL, price, T0);
const store = openStore({ path: ':memory:', clock: engineClock });
const venue = new InProcessVenue(sim, 'k');
const engine = new Engine({
  venue,
  clock: engineClock,
  store,
  logger: silentLogger,
  instances: [
    {
      config: onePairInstance({ name: 'a', strategy: 'ladder', symbol: SYMBOL }),
      definition: ladder,
      params: {},
    },
  ],
});
await engine.start();

const random = mulberry32(Number(values.seed));
const placedAfterStep: number[] = [];
/** When each exchange order's fills were last recorded, on the exchange's clock (read after every poll). */
const recorded = new Map<string, number>();
let fillsSeen = 0;
const end = T0 + HOURS * 3_600_000;
while (venueClock.now() < end) {
  // The price moves every second; the engine looks every 5 s: a fill waits up to one poll for its record.
  for (let i = 0; i < CADENCE_MS / 1000; i++) {
    venueClock.time += 1000;
    price = Math.round((price + (100 - price) * 0.02 + (random() - 0.5) * 0.4) * 100) / 100;
    sim.onPrice(SYMBOL, price, venueClock.now());
  }
  if (aheadMs === 0 && venueClock.now() >= STEP_AT) aheadMs = STEP_MS;
  const before = store.orders.all().length;
  const observed = engine.observe(await venue.marketWatch(SYMBOL));
  if (observed) await observed;
  await engine.pollOrders();
  if (venueClock.now() > STEP_AT && store.orders.all().length > before) placedAfterStep.push(venueClock.now());
  const fills = store.fills.forInstance('a');
  for (const f of fills.slice(fillsSeen)) {
    const id = store.orders.get(f.orderLocalId)?.exchangeId;
    if (id !== undefined) recorded.set(id, venueClock.now());
  }
  fillsSeen = fills.length;
}

const delays = { before: [] as number[], after: [] as number[] };
let unrecorded = 0;
for (const f of sim.fills('k')) {
  const at = recorded.get(String(f.orderId));
  if (at === undefined) unrecorded++;
  else (f.time < STEP_AT ? delays.before : delays.after).push(at - f.time);
}
const stat = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p: number) => ((s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? 0) / 1000).toFixed(1);
  return `${s.length} fills, longest ${s.length === 0 ? '-' : ((s[s.length - 1] as number) / 1000).toFixed(1)} s, median ${q(0.5)} s`;
};
let quiet = 0;
for (let i = 0, last = STEP_AT; i <= placedAfterStep.length; i++) {
  const t = placedAfterStep[i] ?? end;
  quiet = Math.max(quiet, t - last);
  last = t;
}
await engine.stop();
console.log(
  [
    `clock step: the engine's clock stepped ${STEP_MS / 1000 >= 0 ? '+' : ''}${STEP_MS / 1000} s at 10 min, ` +
      `${HOURS} h of a ladder at a 5 s cadence (market cycle and orders poll), seed ${values.seed}`,
    `  fill at the exchange to its record, before the step: ${stat(delays.before)}`,
    `  fill at the exchange to its record, after the step:  ${stat(delays.after)}`,
    `  fills never recorded: ${unrecorded}; longest stretch without an order placed after the step: ${(quiet / 1000).toFixed(0)} s`,
  ].join('\n'),
);
