/**
 * Issue 21's measurement of the fill model, printed (no assertions): the down-tick probe (bench/strategies,
 * buys any down-tick, sells the next tick) on one day of the real BTCUSDT candles of the shipped sample
 * (2023-03-10, the sample's most volatile; `--probe-days N` for N days from there, up to 12, or `--probe-days
 * all` for the sample's 21 days: at zero latency it trades about 4,000 times a day), and each shipped strategy
 * (config/*.json), under the old fill model (zero latency, the import's nearer-first path, no volume cap, no
 * fees), under today's defaults without fees (the fill model's own share of the change) and under today's
 * defaults (one data step of latency, the shortest path, 10% of the volume, fees 0.001). The down-tick probe
 * decides on every recorded ticker (--every-tick); the shipped strategies on their schedules. Figures are fills,
 * final equity and return on 10000 USDT; the machine's load does not change them (only how long the bench
 * takes, printed on stderr). `npm run bench:fill-model`.
 */
import { runJob } from '../src/backtest/job.js';
import { DEFAULT_JOB_SETTINGS, type JobSettings } from '../src/backtest/job-settings.js';
import { readConfigs } from '../src/backtest/strategy-configs.js';
import { loadTicks, sliceTicks, type TickData } from '../src/backtest/tick-data.js';

const SAMPLE = 'data/samples/BTCUSDT-2023-03-01_21.jsonl.gz';
const SHIPPED = ['grid', 'dca', 'mean-reversion', 'breakout', 'ema-trend'].map((n) => `config/${n}-btcusdt.json`);

const PROBE_FROM = Date.UTC(2023, 2, 10);
const DAY_MS = 86_400_000;

/** The probe's window: one day from 2023-03-10 by default, N days from there, or the whole sample ('all'). */
function probeWindow(data: TickData): { label: string; ticks: TickData } {
  const i = process.argv.indexOf('--probe-days');
  const arg = i < 0 ? '1' : process.argv[i + 1];
  if (arg === 'all') return { label: 'the 21 days of the sample', ticks: data };
  const n = Number(arg);
  if (!(Number.isInteger(n) && n >= 1 && n <= 12))
    throw new Error(
      `--probe-days must be a whole number from 1 to 12 (days from 2023-03-10) or all (the 21 days), got '${arg}'`,
    );
  return {
    label: `${n} day${n > 1 ? 's' : ''} from 2023-03-10`,
    ticks: sliceTicks(data, PROBE_FROM, PROBE_FROM + n * DAY_MS),
  };
}

const OLD: Partial<JobSettings> = {
  latencyMs: 0,
  candlePath: 'nearer-first',
  participation: null,
  makerFee: '0',
  takerFee: '0',
};

async function main(): Promise<void> {
  const data = await loadTicks([SAMPLE]);
  const probe = probeWindow(data);
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
      ['new defaults but no fees', { ...DEFAULT_JOB_SETTINGS, ...extra, makerFee: '0', takerFee: '0' }],
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
    `down-tick (every tick, ${probe.label})`,
    ['bench/configs/down-tick-btcusdt.json'],
    'bench/strategies',
    { everyTick: true },
    probe.ticks,
  );
  for (const file of SHIPPED) await run(file.replace(/^config\/|\.json$/g, ''), [file], undefined, {});
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  for (const r of rows) console.log(r.map((cell, c) => cell.padEnd(widths[c]!)).join('  '));
}

await main();
