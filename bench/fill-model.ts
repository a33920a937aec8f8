/**
 * Issue 21's measurement of the fill model, printed (no assertions): the down-tick probe (bench/strategies,
 * buys any down-tick, sells the next tick) on one day of the real BTCUSDT candles of the shipped sample
 * (2023-03-10, the sample's most volatile; `--probe-days N` for more: at zero latency it trades about 4,000
 * times a day, so the 21 days take many minutes), and each
 * shipped strategy (config/*.json), under the old fill model (zero latency, the import's nearer-first path, no
 * volume cap, no fees) and under today's defaults (one data step of latency, the shortest path, 10% of the
 * volume, fees 0.001). The down-tick probe decides on every recorded ticker (--every-tick); the shipped
 * strategies on their schedules. Figures are final equity and return on 10000 USDT; the machine's load does not
 * change them (only how long the bench takes). `npm run bench:fill-model`.
 */
import { DEFAULT_JOB_SETTINGS, type JobSettings, runJob } from '../src/backtest/job.js';
import { readConfigs } from '../src/backtest/strategy-configs.js';
import { loadTicks, sliceTicks, type TickData } from '../src/backtest/tick-data.js';

const SAMPLE = 'data/samples/BTCUSDT-2023-03-01_21.jsonl.gz';
const SHIPPED = ['grid', 'dca', 'mean-reversion', 'breakout', 'ema-trend'].map((n) => `config/${n}-btcusdt.json`);

const PROBE_FROM = Date.UTC(2023, 2, 10);
const DAY_MS = 86_400_000;

function probeDays(): number {
  const i = process.argv.indexOf('--probe-days');
  if (i < 0) return 1;
  const n = Number(process.argv[i + 1]);
  if (!(Number.isInteger(n) && n >= 1 && n <= 12))
    throw new Error(
      `--probe-days must be a whole number from 1 to 12 (days from 2023-03-10), got '${process.argv[i + 1]}'`,
    );
  return n;
}

const OLD: Partial<JobSettings> = {
  latencyMs: 0,
  candlePath: 'nearer-first',
  participation: null,
  makerFee: '0',
  takerFee: '0',
};

async function main(): Promise<void> {
  const days = probeDays();
  const data = await loadTicks([SAMPLE]);
  const rows: string[][] = [['strategy', 'fill model', 'fills', 'final equity', 'return %']];
  const run = async (
    label: string,
    files: string[],
    strategies: string | undefined,
    extra: Partial<JobSettings>,
    ticks: TickData = data,
  ) => {
    const { sources } = await readConfigs(files, strategies);
    for (const [model, settings] of [
      ['old (0 latency, nearer-first, no cap, no fees)', { ...DEFAULT_JOB_SETTINGS, ...extra, ...OLD }],
      ['new defaults', { ...DEFAULT_JOB_SETTINGS, ...extra }],
    ] as const) {
      const t0 = performance.now();
      const { summary } = await runJob(sources, ticks, { ...settings, balances: { USDT: '10000' } });
      const m = summary.metrics;
      rows.push([label, model, String(m.fills), m.finalEquity, m.totalReturnPct]);
      process.stderr.write(`${label} / ${model}: ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
    }
  };
  await run(
    `down-tick (every tick, ${days} day${days > 1 ? 's' : ''} from 2023-03-10)`,
    ['bench/configs/down-tick-btcusdt.json'],
    'bench/strategies',
    { everyTick: true },
    sliceTicks(data, PROBE_FROM, PROBE_FROM + days * DAY_MS),
  );
  for (const file of SHIPPED) await run(file.replace(/^config\/|\.json$/g, ''), [file], undefined, {});
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  for (const r of rows) console.log(r.map((cell, c) => cell.padEnd(widths[c]!)).join('  '));
}

await main();
