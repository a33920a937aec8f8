/**
 * Soak: an accelerated run of the engine as the daemon runs it (market data in, orders poll after every
 * tick, refresh every 1000 ticks) with ten instances of the shipped strategies, the journal on a file, on the
 * simulated exchange's matching engine in process and a virtual clock (the backtest's way to reach a million
 * ticks quickly: the BTCUSDT sample, looped with its times shifted). RSS, heap after a GC, open handles and
 * the database's size are sampled and printed; after the warm-up the heap and the handles must stay within
 * the stated bounds. SOAK_TICKS sets the length (default 60 000; `npm run test:chaos` runs 1 000 000).
 *
 * The heap does grow with the orders: the simulated exchange keeps its whole order and trade history in
 * memory (16.4 MB for 3,400 filled orders on the matching engine alone, about 4.9 kB each). So the bound is
 * per order placed after the warm-up, and it leaves the bot itself a fraction of that.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/engine.js';
import { tickerFromWire, type WireTicker } from '../../src/wire/schemas.js';
import { silentLogger } from '../../src/ops/logger.js';
import { VirtualClock } from '../../src/clocks/virtual-clock.js';
import { readRecordingBatches } from '../../src/record/recording-reader.js';
import { InProcessVenue } from '../../src/venues/in-process-venue.js';
import { MatchingEngine } from '../../src/sim/matching-engine.js';
import { openStore } from '../../src/store/store.js';
import { shippedInstances } from '../../bench/shipped-instances.js';
import { ROOT } from '../e2e/daemon-process.js';
import { tempDir } from '../support/temp-dir.js';

const TICKS = Number(process.env.SOAK_TICKS ?? 60_000);
const SAMPLE = join(ROOT, 'data/samples/BTCUSDT-2023-03-01_21.jsonl.gz');
/**
 * Heap growth allowed from the end of the warm-up (a fifth of the run) to the end, after a GC: 6 kB per order
 * placed meanwhile (the simulated exchange's history takes about 4.9 kB of it), plus 4 MB.
 */
const HEAP_PER_ORDER = 6 * 1024;
const HEAP_SLACK = 4 * 1024 * 1024;
/** Open handles (timers, files, sockets) allowed beyond those at the end of the warm-up. */
const HANDLE_BOUND = 4;
const dir = tempDir('chaos-soak');

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** The sample's tickers, over and over, each pass shifted past the previous one's end. */
async function* tickers(): AsyncGenerator<WireTicker> {
  let shift = 0;
  for (;;) {
    let last = 0;
    let first: number | undefined;
    for await (const batch of readRecordingBatches(SAMPLE)) {
      for (const t of batch) {
        first ??= t.t;
        last = t.t;
        yield shift === 0 ? t : { ...t, t: t.t + shift };
      }
    }
    shift += last - (first ?? 0) + 60_000;
  }
}

interface Sample {
  ticks: number;
  orders: number;
  rss: number;
  heap: number;
  handles: number;
  dbBytes: number;
}

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

describe('soak', () => {
  it(`${TICKS} ticks through ten instances: heap and handles stay bounded`, async () => {
    const instances = await shippedInstances();
    const clock = new VirtualClock(0);
    const sim = new MatchingEngine({ clock });
    sim.createAccount({ apiKey: 'soak', balances: { USDT: '1000000', BTC: '10' } });
    const venue = new InProcessVenue(sim, 'soak');
    const dbPath = join(dir, 'soak.db');
    const store = openStore({ path: dbPath, clock, synchronous: process.env.SOAK_SYNC === 'FULL' ? 'FULL' : 'NORMAL' });
    const engine = new Engine({ venue, clock, store, logger: silentLogger, instances });
    const dbBytes = () =>
      ['', '-wal'].reduce((n, suffix) => n + (statSync(`${dbPath}${suffix}`, { throwIfNoEntry: false })?.size ?? 0), 0);
    const sample = (ticks: number): Sample => {
      gc();
      const m = process.memoryUsage();
      return {
        ticks,
        orders: engine.instances().reduce((n, i) => n + i.counters.placed, 0),
        rss: m.rss,
        heap: m.heapUsed,
        handles: process.getActiveResourcesInfo().length,
        dbBytes: dbBytes(),
      };
    };

    const samples: Sample[] = [sample(0)];
    const every = Math.max(1, Math.floor(TICKS / 10));
    const started = performance.now();
    let fed = 0;
    for await (const ticker of tickers()) {
      clock.time = ticker.t;
      sim.onTicker(ticker);
      if (fed === 0) await engine.start();
      const pending = engine.observe([tickerFromWire(ticker)]);
      if (pending) await pending;
      const polled = engine.pollOrders();
      if (polled) await polled;
      if (++fed % 1000 === 0) await engine.refresh();
      if (fed % every === 0) samples.push(sample(fed));
      if (fed >= TICKS) break;
    }
    const seconds = (performance.now() - started) / 1000;
    const running = engine.instances().filter((i) => i.status === 'running').length;
    await engine.stop();
    const totals = engine
      .instances()
      .reduce((sum, i) => ({ placed: sum.placed + i.counters.placed, fills: sum.fills + i.counters.fills }), {
        placed: 0,
        fills: 0,
      });
    const end = samples.at(-1)!;
    const warm = samples[2] ?? samples[1]!;
    store.close();
    const heapBound = (end.orders - warm.orders) * HEAP_PER_ORDER + HEAP_SLACK;
    console.log(
      [
        `soak: ${fed} ticks × 10 instances in ${seconds.toFixed(0)} s (${(fed / seconds).toFixed(0)} ticks/s), ` +
          `${totals.placed} orders, ${totals.fills} fills, ${running} instances running`,
        '     ticks   orders   RSS MB  heap MB  handles   db MB',
        ...samples.map(
          (s) =>
            `${String(s.ticks).padStart(10)} ${String(s.orders).padStart(8)} ${mb(s.rss).padStart(8)} ${mb(s.heap).padStart(8)} ` +
            `${String(s.handles).padStart(8)} ${mb(s.dbBytes).padStart(7)}`,
        ),
        `growth after the warm-up (${warm.ticks} ticks): heap ${mb(end.heap - warm.heap)} MB for ` +
          `${end.orders - warm.orders} orders (bound ${mb(heapBound)} MB), ` +
          `handles ${end.handles - warm.handles} (bound ${HANDLE_BOUND}), RSS ${mb(end.rss - warm.rss)} MB; ` +
          `database ${mb(end.dbBytes)} MB for ${totals.placed} orders and ${totals.fills} fills`,
      ].join('\n'),
    );
    expect(fed).toBe(TICKS);
    expect(running).toBe(10);
    expect(end.heap - warm.heap).toBeLessThan(heapBound);
    expect(end.handles - warm.handles).toBeLessThanOrEqual(HANDLE_BOUND);
  }, 3_600_000);
});
