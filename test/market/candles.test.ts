import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadTicks, type TickData } from '../../src/backtest/tick-data.js';
import { D, type Dec } from '../../src/market/decimal.js';
import { CandleBuilder, TIMEFRAME_MS, TIMEFRAMES, type Candle, type Timeframe } from '../../src/market/candles.js';
import { CSV_HEADER, importCandles } from '../../src/record/candles.js';
import { mulberry32 } from '../../src/sim/prng.js';
import { writeRecording } from '../sim/server-fixtures.js';
import { tempDir } from '../support/temp-dir.js';
import { valueAt } from '../../src/backtest/number-column.js';
import { assetsOf } from '../../src/cli/import-candles.js';

interface Row {
  openTime: number;
  open: string;
  high: string;
  low: string;
  close: string;
  volume: string;
}

const START = Date.UTC(2023, 2, 1, 0, 0);
const MINUTE = 60_000;

/**
 * Three and a half days of one-minute candles from a seeded random walk, 8-decimal volumes, with gaps: a few
 * missing minutes, a missing hour, and a missing day and a half (longer than the 24-hour volume window).
 */
function makeRows(): Row[] {
  const random = mulberry32(23);
  const rows: Row[] = [];
  let price = 22_000;
  const skip = (m: number) =>
    m % 997 === 13 || (m >= 2000 && m < 2060) || (m >= 3000 && m < 3000 + 36 * 60) || m === 4799;
  for (let m = 0; m < 7200; m++) {
    const open = price;
    const close = Math.max(1, open + (random() - 0.5) * 40);
    const high = Math.max(open, close) + random() * 15;
    const low = Math.max(0.01, Math.min(open, close) - random() * 15);
    price = close;
    if (skip(m)) continue;
    const fix = (x: number) => x.toFixed(2);
    rows.push({
      openTime: START + m * MINUTE,
      open: fix(open),
      high: fix(high),
      low: fix(low),
      close: fix(close),
      volume: (random() * 5).toFixed(8),
    });
  }
  return rows;
}

/** Candles of `tf` aggregated straight from the CSV rows, exactly (exact decimals), every bucket with a row. */
function expected(rows: readonly Row[], tf: Timeframe): Candle[] {
  const ms = TIMEFRAME_MS[tf];
  const out: { time: number; open: string; high: Dec; low: Dec; close: string; volume: Dec }[] = [];
  for (const r of rows) {
    const time = Math.floor(r.openTime / ms) * ms;
    const last = out[out.length - 1];
    if (last === undefined || last.time !== time) {
      out.push({
        time,
        open: r.open,
        high: new D(r.high),
        low: new D(r.low),
        close: r.close,
        volume: new D(r.volume),
      });
      continue;
    }
    last.high = D.max(last.high, r.high);
    last.low = D.min(last.low, r.low);
    last.close = r.close;
    last.volume = last.volume.plus(r.volume);
  }
  return out.map((c) => ({
    time: c.time,
    open: Number(c.open),
    high: c.high.toNumber(),
    low: c.low.toNumber(),
    close: Number(c.close),
    volume: c.volume.toNumber(),
  }));
}

function feed(builder: CandleBuilder, data: TickData, from = 0, to = data.length): void {
  const { time, price, vb } = data.columns;
  for (let i = from; i < to; i++) builder.tick(valueAt(time, i), valueAt(price, i), valueAt(vb, i));
}

const ALL: Record<Timeframe, number> = { '1m': 10_000, '5m': 2000, '15m': 1000, '1h': 200, '4h': 50, '1d': 10 };

describe('candles built from ticks', () => {
  let dir: string;
  let rows: Row[];
  let data: TickData;

  beforeAll(async () => {
    dir = tempDir('spot-bot-candles');
    rows = makeRows();
    const csv = path.join(dir, 'candles.csv');
    const lines = rows.map(
      (r) =>
        `${new Date(r.openTime).toISOString().replace('T', ' ').replace('.000Z', '+00:00')},${r.open},${r.high},${r.low},${r.close},${r.volume}`,
    );
    await writeFile(csv, `${CSV_HEADER}\n${lines.join('\n')}\n`);
    const result = await importCandles({ symbol: 'BTCUSDT', files: [csv], outDir: dir, assets: assetsOf('BTCUSDT') });
    data = await loadTicks([result.file]);
  });

  it('equal the candles aggregated from the imported CSV, at every timeframe, volumes included', () => {
    const builder = new CandleBuilder(ALL);
    feed(builder, data);
    for (const tf of TIMEFRAMES) {
      const want = expected(rows, tf);
      // The last bucket is still forming: no later tick closed it.
      const closed = want.slice(0, -1);
      expect(builder.candles(tf, ALL[tf]), tf).toEqual(closed);
      expect(builder.candles(tf, ALL[tf], true).at(-1), `${tf} forming`).toEqual({
        ...want.at(-1),
        // The forming candle has the volume of its minutes that ended; its last minute has not.
        volume: expect.any(Number) as number,
      });
    }
    // The one-minute candles are exactly the imported ones.
    expect(builder.candles('1m', ALL['1m']).length).toBe(rows.length - 1);
  });

  it('keep only the declared count, oldest first, and hand back the same array until a candle closes', () => {
    const builder = new CandleBuilder({ '5m': 3 });
    feed(builder, data);
    const want = expected(rows, '5m').slice(0, -1);
    const got = builder.candles('5m', 10);
    expect(got).toEqual(want.slice(-3));
    expect(builder.candles('5m', 2)).toEqual(want.slice(-2));
    expect(builder.candles('5m', 2)).toBe(builder.candles('5m', 2));
    expect(builder.candles('1h', 5)).toEqual([]);
  });

  it('a builder warmed up on the data before a start, or restored from a snapshot, goes on as one that saw it all', () => {
    const whole = new CandleBuilder(ALL);
    feed(whole, data);
    const cut = Math.floor(data.length * 0.6);
    const first = new CandleBuilder(ALL);
    feed(first, data, 0, cut);
    const restarted = new CandleBuilder(ALL);
    restarted.restore(JSON.parse(JSON.stringify(first.snapshot())) as ReturnType<CandleBuilder['snapshot']>);
    feed(restarted, data, cut);
    for (const tf of TIMEFRAMES) {
      expect(restarted.candles(tf, ALL[tf]), tf).toEqual(whole.candles(tf, ALL[tf]));
    }
  });

  it('ignores ticks older than the last one and non-positive prices', () => {
    const builder = new CandleBuilder({ '1m': 5 });
    builder.tick(START, 10, NaN);
    builder.tick(START + 10_000, 12, NaN);
    builder.tick(START + 5_000, 99, NaN);
    builder.tick(START + 20_000, 0, NaN);
    builder.tick(START + MINUTE, 11, NaN);
    expect(builder.candles('1m', 5)).toEqual([{ time: START, open: 10, high: 12, low: 10, close: 12, volume: 0 }]);
  });
});

/**
 * A ticker recording as the recorder writes one from a live exchange: ticks at uneven intervals (1 to 20 s, with
 * a 7-minute and a 2-hour hole), each carrying the last price and the rolling 24-hour base volume. The trades
 * happen at the ticks (integer units of 1e-8 BTC) and the window moves by the minute, as the builder assumes.
 * Returns the wire lines and, kept apart, every tick's own trade: what an independent aggregation needs.
 */
function tickerTape(): { lines: { s: string; p: number; t: number; vb: number }[]; trades: number[] } {
  const random = mulberry32(7);
  const lines: { s: string; p: number; t: number; vb: number }[] = [];
  const trades: number[] = [];
  const perMinute = new Map<number, number>();
  let windowUnits = 0;
  let windowFrom = 0;
  let price = 22_000;
  let t = START + 3_000;
  const end = START + 3 * 1440 * MINUTE + 5 * MINUTE;
  while (t < end) {
    const minute = Math.floor(t / MINUTE);
    // The window holds the minutes [minute - 1439, minute].
    for (; windowFrom <= minute - 1440; windowFrom++) windowUnits -= perMinute.get(windowFrom) ?? 0;
    windowFrom = Math.max(windowFrom, minute - 1439);
    // The tape starts with an empty window: a first figure above zero would hide a trade no builder can see.
    const units = lines.length === 0 ? 0 : Math.floor(random() * 50_000_000);
    perMinute.set(minute, (perMinute.get(minute) ?? 0) + units);
    windowUnits += units;
    price = Math.max(1, Math.round((price + (random() - 0.5) * 30) * 100) / 100);
    lines.push({ s: 'BTCUSDT', p: price, t, vb: windowUnits / 1e8 });
    trades.push(units);
    const hole = lines.length === 5000 ? 7 * MINUTE : lines.length === 12_000 ? 2 * 60 * MINUTE : 0;
    t += hole + 1_000 + Math.floor(random() * 19_000);
  }
  return { lines, trades };
}

describe('candles built from live ticker ticks (not imported candles)', () => {
  it('equal the candles aggregated straight from the raw ticks, at every timeframe, volumes included', async () => {
    const dir = tempDir('spot-bot-ticker-candles');
    const { lines, trades } = tickerTape();
    const data = await loadTicks([writeRecording(dir, 'BTCUSDT', lines)]);
    expect(data.length).toBe(lines.length);
    const builder = new CandleBuilder(ALL);
    feed(builder, data);
    for (const tf of TIMEFRAMES) {
      // Independently: bucket the raw lines by the timeframe, OHLC from their prices, volume from their trades.
      const ms = TIMEFRAME_MS[tf];
      const want: { time: number; open: number; high: number; low: number; close: number; units: number }[] = [];
      lines.forEach((line, i) => {
        const time = line.t - (line.t % ms);
        const last = want.at(-1);
        const units = trades[i] as number;
        if (last === undefined || last.time !== time)
          want.push({ time, open: line.p, high: line.p, low: line.p, close: line.p, units });
        else {
          last.high = Math.max(last.high, line.p);
          last.low = Math.min(last.low, line.p);
          last.close = line.p;
          last.units += units;
        }
      });
      const closed = want.slice(0, -1);
      const got = builder.candles(tf, ALL[tf]);
      expect(got.length, tf).toBe(Math.min(closed.length, ALL[tf]));
      const tail = closed.slice(-got.length);
      expect(
        got.map(({ time, open, high, low, close }) => ({ time, open, high, low, close })),
        tf,
      ).toEqual(tail.map(({ time, open, high, low, close }) => ({ time, open, high, low, close })));
      got.forEach((candle, i) => {
        // The volume is recovered from the rolling 24-hour figure, to the exchange's 8 decimals.
        expect(
          Math.abs(candle.volume - (tail[i] as { units: number }).units / 1e8),
          `${tf} ${candle.time}`,
        ).toBeLessThan(2e-8 * (ms / MINUTE));
      });
    }
  });
});
