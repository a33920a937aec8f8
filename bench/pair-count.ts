/**
 * A backtest's cost against the pair count (issue 41), printed (no assertions): one strategy file over 1, 5 and 20
 * pairs on one account, the shipped ema-trend params (config/ema-trend-usdt.json, without its portfolio limits so
 * that every pair trades), over the three days of data/samples/2023-04. The five sample pairs are real; the twenty
 * are those five and three copies of each under other names (BTCX1USDT: the same ticks, its own base asset and
 * id), so 20 pairs cost what 20 pairs of such data cost without claiming new prices. For each count: the ticks,
 * the cold load (read, scan, columns), the replay warm (median of `--rounds`, default 3, CPU seconds of this
 * process: the replay runs on it alone), per recorded ticker and per pair, fills and closed trades.
 * `npm run bench:pairs [-- --rounds N]`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { runJob } from '../src/backtest/job.js';
import { DEFAULT_JOB_SETTINGS } from '../src/backtest/job-settings.js';
import { readConfigs } from '../src/backtest/strategy-configs.js';
import { loadTicks } from '../src/backtest/tick-data.js';
import { readRecording } from '../src/record/recording-reader.js';
import { RecordingWriter } from '../src/record/recording-writer.js';
import type { RecordingHeader } from '../src/record/recording-format.js';
import type { WireTicker } from '../src/wire/schemas.js';

const SAMPLE_DIR = 'data/samples/2023-04';
const PAIRS = ['BTCUSDT', 'ETHUSDT', 'SOLUSDT', 'XRPUSDT', 'ADAUSDT'];
const COUNTS = [1, 5, 20];
const roundsAt = process.argv.indexOf('--rounds');
const ROUNDS = roundsAt > 0 ? Number(process.argv[roundsAt + 1]) : 3;

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

/** The sample of `symbol` written under copy `c`'s name (c 0: itself), its file's path. */
async function pairFile(dir: string, symbol: string, c: number): Promise<string> {
  const source = join(SAMPLE_DIR, `${symbol}-2023-04-13_15.jsonl.gz`);
  if (c === 0) return source;
  const base = symbol.replace(/USDT$/, '');
  const name = `${base}X${c}`;
  const renamed = `${name}USDT`;
  const id = 100 + PAIRS.indexOf(symbol) * 10 + c;
  let header: RecordingHeader | undefined;
  const ticks: WireTicker[] = [];
  for await (const t of readRecording(source, { onHeader: (h) => (header = h) }))
    ticks.push({ ...t, s: renamed, b: name, bi: id });
  const h = header as RecordingHeader;
  const pair = h.pair === undefined ? undefined : { ...h.pair, symbol: renamed, baseAsset: name, baseAssetId: id };
  const file = join(dir, `${renamed}-2023-04-13_15.jsonl.gz`);
  const writer = await RecordingWriter.open(file, { header: { ...h, symbol: renamed, pair } });
  await writer.writeTickers(ticks);
  await writer.close();
  return file;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-pairs-'));
  try {
    const files: { symbol: string; file: string }[] = [];
    for (let c = 0; c < 4; c++)
      for (const symbol of PAIRS) {
        const file = await pairFile(dir, symbol, c);
        files.push({ symbol: c === 0 ? symbol : `${symbol.replace(/USDT$/, '')}X${c}USDT`, file });
      }
    console.log(`backtest cost against the pair count: ema-trend over ${SAMPLE_DIR} (3 days of one-minute candles)`);
    console.log(
      `load average at start ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}; ${ROUNDS} warm rounds each\n`,
    );
    console.log('pairs  tickers    load s  replay CPU s  us/ticker  CPU s/pair  fills  trades  (per pair vs 1 pair)');
    let perPairOfOne: number | undefined;
    for (const n of COUNTS) {
      const chosen = files.slice(0, n);
      const config = join(dir, `ema-trend-${n}.json`);
      writeFileSync(
        config,
        JSON.stringify({
          name: `ema-trend-${n}`,
          strategy: 'ema-trend',
          symbols: chosen.map((f) => f.symbol),
          schedule: '*/5 * * * * *',
          params: {
            timeframe: '15m',
            fast: 12,
            slow: 26,
            rsiPeriod: 14,
            rsiMax: 70,
            atrPeriod: 14,
            atrStop: 2,
            quoteAmount: '50',
          },
          risk: { maxOrderNotional: '60', maxOpenOrders: 2, dailyLossLimit: '10' },
        }),
      );
      const t0 = performance.now();
      const data = await loadTicks(chosen.map((f) => f.file));
      const loadS = (performance.now() - t0) / 1000;
      const { sources } = await readConfigs([config]);
      // Every pair's entry of 50 USDT at once, and more: the balance never decides.
      const settings = { ...DEFAULT_JOB_SETTINGS, balances: { USDT: '100000' } };
      const first = await runJob(sources, data, settings);
      const cpu: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        const c0 = process.cpuUsage();
        await runJob(sources, data, settings);
        const c = process.cpuUsage(c0);
        cpu.push((c.user + c.system) / 1e6);
      }
      const s = median(cpu);
      const perPair = s / n;
      perPairOfOne ??= perPair;
      console.log(
        [
          String(n).padEnd(6),
          fmt(data.length).padEnd(10),
          loadS.toFixed(2).padStart(6),
          s.toFixed(2).padStart(13),
          ((s / data.length) * 1e6).toFixed(2).padStart(10),
          perPair.toFixed(3).padStart(11),
          String(first.run.fills.length).padStart(6),
          String(first.summary.metrics.roundTrips).padStart(7),
          `   ${(perPair / perPairOfOne).toFixed(2)}x`,
        ].join(' '),
      );
    }
    console.log(
      `\nload average at the end ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
