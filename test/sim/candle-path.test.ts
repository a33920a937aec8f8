/**
 * The path inside a candle (sim/candle-path.ts): which order each model walks, and that a backtest's columns
 * and paper's recorded feed find the same candles and walk the same path with the same volume per tick (one
 * import serves every model).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { gunzipSync, gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseEnv } from '../../src/app/env.js';
import fc from 'fast-check';
import { candleRoles, candleTicks } from '../../src/backtest/candle-ticks.js';
import type { ConfigError } from '../../src/errors.js';
import { loadTicks } from '../../src/backtest/tick-data.js';
import { fromWire } from '../../src/market/decimal.js';
import { importCandles } from '../../src/record/candles.js';
import {
  CANDLE_KEY,
  CANDLE_PATHS,
  CandleFinder,
  candleTickVolume,
  parseCandlePath,
  swapsExtremes,
} from '../../src/sim/candle-path.js';
import { lockstepFeed } from '../../src/sim/feeds.js';
import { MatchingEngine, type TickerInput } from '../../src/sim/matching-engine.js';
import { tempDir } from '../support/temp-dir.js';
import { columnValues, type NumberColumn, valueAt } from '../../src/backtest/number-column.js';
import type { TickColumns } from '../../src/backtest/tick-columns.js';
import { columnArrays } from '../support/tick-columns.js';
import { assetsOf } from '../../src/cli/import-candles.js';

const CANDLES = 'test/fixtures/binanceus-BTCUSDT-1m-2023-03-10-0000_0559.csv';

/** The order a model walks a candle recorded (imported nearer-first) as open, p1, p2, close. */
function walk(path: (typeof CANDLE_PATHS)[number], p: [number, number, number, number]): number[] {
  const [o, a, b, c] = p;
  return swapsExtremes(path, o, a, b, c) ? [o, b, a, c] : [o, a, b, c];
}

describe('candle path models', () => {
  it('walks each candle in the order its model names, the shortest against the candle’s direction', () => {
    const upHighNearer: [number, number, number, number] = [100, 102, 90, 101]; // imported high first
    const downLowNearer: [number, number, number, number] = [100, 98, 110, 99]; // imported low first
    expect(walk('nearer-first', upHighNearer)).toEqual([100, 102, 90, 101]);
    expect(walk('shortest', upHighNearer)).toEqual([100, 90, 102, 101]); // up: dips first
    expect(walk('longest', upHighNearer)).toEqual([100, 102, 90, 101]);
    expect(walk('shortest', downLowNearer)).toEqual([100, 110, 98, 99]); // down: rises first
    expect(walk('longest', downLowNearer)).toEqual([100, 98, 110, 99]);
    expect(walk('high-first', downLowNearer)).toEqual([100, 110, 98, 99]);
    expect(walk('low-first', upHighNearer)).toEqual([100, 90, 102, 101]);
    // A flat candle keeps the import's order; a candle without range has nothing to swap.
    expect(walk('shortest', [100, 102, 90, 100])).toEqual([100, 102, 90, 100]);
    expect(walk('high-first', [100, 100, 100, 100])).toEqual([100, 100, 100, 100]);
  });

  it('makes the shortest path never longer than the other on real candles', () => {
    const travel = (p: number[]) => p.slice(1).reduce((sum, x, i) => sum + Math.abs(x - (p[i] as number)), 0);
    const rows = readFileSync(CANDLES, 'utf8').trim().split('\n').slice(1);
    let shorter = 0;
    for (const row of rows) {
      const [, o, h, l, c] = row.split(',').map(Number);
      const highFirst: [number, number, number, number] = [o!, h!, l!, c!];
      const lowFirst: [number, number, number, number] = [o!, l!, h!, c!];
      const shortest = travel(walk('shortest', highFirst));
      expect(shortest).toBe(travel(walk('shortest', lowFirst)));
      expect(shortest).toBeLessThanOrEqual(Math.min(travel(highFirst), travel(lowFirst)) + 1e-9);
      if (shortest < travel(walk('nearer-first', highFirst)) - 1e-9) shorter++;
    }
    expect(shorter).toBeGreaterThan(rows.length / 10); // the import's path is often the longer one
  });

  it('gives a quarter of the candle’s volume to each of its ticks, exactly', () => {
    expect(candleTickVolume(1234.5678, 1235.0122)).toBe(0.1111);
    expect(candleTickVolume(0, 0.00001)).toBe(0.0000025);
    expect(candleTickVolume(Number.NaN, 1)).toBeUndefined();
    // In whole hundred-millionths or not, small or past 2^25, it is the double nearest the exact quarter.
    const exact = (a: number, b: number) => Number(fromWire(b).minus(fromWire(a)).div(4).toFixed());
    const volumes = [0, 1e-8, 3e-8, 0.1, 0.3, 0.12345678, 0.123456789, 1 / 3, 7.00000001, 12345.6789];
    for (const big of [2 ** 25 - 0.5, 2 ** 25, 4e7 + 0.01, 1e12 + 0.25, 9.5e15]) volumes.push(big);
    for (let k = 1; k < 2000; k++) volumes.push(Number(((k * 7919.123456789) % 99991).toFixed(k % 11)));
    for (const a of volumes)
      for (const b of [a, a + 1e-8, a + 0.3, a * 1.0000001, a + 1 / 7, a + 123.45678901])
        if (b >= a) expect(candleTickVolume(a, b), `${a} ${b}`).toBe(exact(a, b));
  });

  it('refuses an unknown model or share naming the flag or variable and what it takes', () => {
    expect(() => parseCandlePath('sideways')).toThrow(
      "--candle-path must be one of shortest, nearer-first, longest, high-first, low-first, got 'sideways'",
    );
    let problems: readonly string[] = [];
    try {
      parseEnv({ PAPER_CANDLE_PATH: 'x', PAPER_PARTICIPATION: '300%' });
    } catch (err) {
      problems = (err as ConfigError).problems;
    }
    expect(problems).toEqual([
      "PAPER_CANDLE_PATH: expected one of shortest, nearer-first, longest, high-first, low-first, got 'x'",
      "PAPER_PARTICIPATION: expected a share of the traded volume such as 10% or 0.25, or off, got '300%'",
    ]);
    expect(parseEnv({})).toMatchObject({ PAPER_CANDLE_PATH: 'shortest', PAPER_PARTICIPATION: '0.1' });
    expect(parseEnv({ PAPER_PARTICIPATION: 'off' }).PAPER_PARTICIPATION).toBeNull();
  });
});

/** The real engine, remembering each ticker it was fed and the volume with it. */
class Fed extends MatchingEngine {
  readonly fed: [number, number, number | undefined][] = [];
  /** The candle each close ticker carried ([open, high, low]), by the ticker's place in the feed. */
  readonly ranges = new Map<number, unknown>();
  override onTicker(ticker: TickerInput, volume?: number): void {
    if (ticker[CANDLE_KEY] !== undefined) this.ranges.set(this.fed.length, ticker[CANDLE_KEY]);
    this.fed.push([ticker.t, ticker.p, volume]);
    super.onTicker(ticker, volume);
  }
}

describe('one path for backtests and paper', () => {
  it('leaves recorded market-watch tickers as they are: no path walked, no candle volume shared out', async () => {
    const dir = tempDir('market-watch');
    // The same prices as the recorder writes them (source market-watch): an hour of the sample's lines.
    const [header, ...lines] = gunzipSync(readFileSync('data/samples/BTCUSDT-2023-03-01_21.jsonl.gz'))
      .toString('utf8')
      .split('\n');
    const file = join(dir, 'BTCUSDT-2023-03-01.jsonl.gz');
    const recorded = { ...(JSON.parse(header!) as object), source: 'market-watch', provenance: 'recorded' };
    writeFileSync(file, gzipSync([JSON.stringify(recorded), ...lines.slice(0, 240)].join('\n') + '\n'));
    const data = await loadTicks([file]);
    expect(data.length).toBe(240);
    for (const path of CANDLE_PATHS) {
      const walked = candleTicks(data, path);
      expect([walked.candles, walked.volume]).toEqual([0, undefined]);
      expect(columnArrays(walked.data)).toEqual(columnArrays(data));
    }
  });

  it('walks the same prices with the same volumes in a backtest’s columns and in a recorded feed', async () => {
    const dir = tempDir('sim-server');
    const csv = join(dir, 'candles.csv');
    writeFileSync(csv, readFileSync(CANDLES, 'utf8').split('\n').slice(0, 61).join('\n'));
    const { file } = await importCandles({ symbol: 'BTCUSDT', files: [csv], outDir: dir, assets: assetsOf('BTCUSDT') });
    const data = await loadTicks([file]);
    const walked = new Map<string, string>();
    for (const path of CANDLE_PATHS) {
      const { data: ticks, volume, candles } = candleTicks(data, path);
      expect(candles).toBe(60);
      const columns = columnValues(ticks.columns.time).map((t, i) => [
        t,
        valueAt(ticks.columns.price, i),
        volume!.at(i),
      ]);
      const engine = new Fed();
      const feed = lockstepFeed({ files: [file], candlePath: path });
      await feed.start(engine);
      for (let i = 0; i < 240; i++) await feed.beforeMarketWatch!();
      await feed.stop();
      expect(engine.fed, path).toEqual(columns);
      // Each candle's extremes at its close's time, and its range told with the close, the same in both.
      const ranges = new Map<number, unknown>();
      for (let i = 0; i < ticks.length; i++) {
        const r = volume!.rangeAt(i);
        if (r !== undefined) ranges.set(i, [r.open, r.high, r.low]);
      }
      expect(ranges.size).toBe(60);
      expect(engine.ranges).toEqual(ranges);
      for (let i = 0; i < 240; i += 4)
        expect(columns.slice(i + 1, i + 4).map(([t]) => t)).toEqual([0, 0, 0].map(() => columns[i + 3]![0]));
      expect(columns.every(([, , v]) => v! >= 0)).toBe(true);
      walked.set(path, JSON.stringify(columns));
    }
    // Walked in place (bot backtest's runs), each model gives the same ticks, and restore() puts the columns back.
    const columnsText = () => JSON.stringify(columnArrays(data));
    const recorded = columnsText();
    for (const path of CANDLE_PATHS) {
      const inPlace = candleTicks(data, path, true);
      expect(inPlace.data.columns.price).toBe(data.columns.price);
      const columns = columnValues(inPlace.data.columns.time).map((t, i) => [
        t,
        valueAt(inPlace.data.columns.price, i),
        inPlace.volume!.at(i),
      ]);
      expect(JSON.stringify(columns), path).toBe(walked.get(path));
      const copied = candleTicks(data, path).data.columns;
      expect(columnValues(inPlace.data.columns.high), path).toEqual(columnValues(copied.high));
      expect(columnValues(inPlace.data.columns.low), path).toEqual(columnValues(copied.low));
      inPlace.restore();
      expect(columnsText(), path).toBe(recorded);
    }
    // The models differ from one another on these candles, and the import's path is nearer-first.
    expect(new Set(walked.values()).size).toBe(CANDLE_PATHS.length);
    const nearer = JSON.parse(walked.get('nearer-first')!) as number[][];
    expect(nearer.map((x) => x[1])).toEqual(columnValues(data.columns.price));
  });

  it('finds the same candles in a backtest’s columns as in a recorded feed, on any interleaving of pairs', () => {
    // The rule is one (isCandle); the scans are two, for memory's sake: findCandles over the columns (a backtest)
    // and one CandleFinder a pair over its feed (paper on recordings). Streams on a 15-second grid with a few
    // off-grid steps and four price levels, so that four ticks in a row are often a candle, often nearly one, and
    // windows overlap: both scans must take the same candles, each left to right, whatever the other pairs do.
    const wide = (values: number[]): NumberColumn => ({
      values: Float64Array.from(values),
      mul: 1,
      div: 1,
      narrow: false,
    });
    const step = fc.tuple(fc.constantFrom(15_000, 15_000, 15_000, 30_000, 1_000), fc.integer({ min: 1, max: 4 }));
    const pairStream = fc.array(step, { maxLength: 80 });
    fc.assert(
      fc.property(fc.array(pairStream, { minLength: 1, maxLength: 3 }), fc.array(fc.nat()), (pairs, picks) => {
        // Each pair's ticks in its own time order, the pairs interleaved as `picks` says.
        const queues = pairs.map((steps, s) => {
          let t = 1_680_000_000_000;
          return steps.map(([dt, p]) => ({ s, t: (t += dt), p }));
        });
        const ticks: { s: number; t: number; p: number }[] = [];
        for (let k = 0; queues.some((q) => q.length > 0); k++) {
          const open = queues.filter((q) => q.length > 0);
          ticks.push(open[(picks[k] ?? k) % open.length]!.shift()!);
        }
        const none = () => wide(ticks.map(() => NaN));
        const columns: TickColumns = {
          sym: Uint16Array.from(ticks.map((x) => x.s)),
          time: wide(ticks.map((x) => x.t)),
          price: wide(ticks.map((x) => x.p)),
          high: none(),
          low: none(),
          vb: none(),
          vq: none(),
        };
        const backtest = Array.from(candleRoles(columns, 0, ticks.length, pairs.length));
        const paper = new Array<number>(ticks.length).fill(0);
        const finders = pairs.map(
          () =>
            new CandleFinder<number>(
              (i) => ticks[i]!.t,
              (i) => ticks[i]!.p,
              (...quad) => quad.forEach((i, role) => (paper[i] = role + 1)),
              () => {},
            ),
        );
        ticks.forEach((x, i) => finders[x.s]!.push(i));
        expect(backtest).toEqual(paper);
      }),
      { numRuns: 500 },
    );
  });

  it('gives each tick its candle’s volume on two pairs interleaved, whichever tick is asked first', async () => {
    const dir = tempDir('sim-server');
    const lines = readFileSync(CANDLES, 'utf8').split('\n').slice(0, 31);
    const files: string[] = [];
    // The same minutes on both pairs (their ticks alternate), ETHUSDT's volumes 3 times BTCUSDT's plus one.
    for (const [symbol, scale] of [
      ['BTCUSDT', 1],
      ['ETHUSDT', 3],
    ] as const) {
      const csv = join(dir, `${symbol}.csv`);
      const scaled = lines.map((l, k) =>
        k === 0 ? l : l.replace(/[^,]+$/, (v) => String(Number(v) * scale + scale - 1)),
      );
      writeFileSync(csv, scaled.join('\n'));
      files.push(
        (await importCandles({ symbol, files: [csv], outDir: join(dir, symbol), assets: assetsOf(symbol) })).file,
      );
    }
    const data = await loadTicks(files);
    const { sym, vb } = data.columns;
    // Each symbol's ticks in fours, in time order: its candles (the two symbols' ticks alternate in the columns).
    const expected = new Array<number | undefined>(data.length);
    for (let s = 0; s < data.symbols.length; s++) {
      const own = [...sym.keys()].filter((i) => sym[i] === s);
      expect(own.length).toBe(120);
      for (let k = 0; k < own.length; k += 4) {
        const v = candleTickVolume(valueAt(vb, own[k]!), valueAt(vb, own[k + 3]!));
        for (let j = k; j < k + 4; j++) expected[own[j]!] = v;
      }
    }
    expect(sym[0]).not.toBe(sym[1]);
    expect(expected.every((v) => v! > 0)).toBe(true);
    const order = [...expected.keys()];
    for (const ticks of [order, [...order].reverse(), [...order.slice(101), ...order.slice(0, 101)]]) {
      const { volume } = candleTicks(data, 'shortest');
      expect(ticks.map((i) => volume!.at(i))).toEqual(ticks.map((i) => expected[i]));
    }
  });
});
