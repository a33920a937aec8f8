/**
 * Invariant 15, measured (issue 38): a strategy that decides inside a one-minute candle from the ticks it has
 * seen so far (bench/strategies/inside-candle.ts) beside a coin flip that trades as often at the same moments
 * (coin-flip.ts, its rate set so that it buys as often), at zero fees without the cost of size (--participation off), deciding on every
 * ticker (--every-tick: the sharpest form of the exploit), with each --candle-path model, over the whole file (the shipped BTCUSDT sample's 21 days by default, or
 * `--data FILE[,FILE…]`). Printed, never asserted: buys, fills, final equity and return on 10000 USDT, and how
 * many buys filled at exactly their candle's low. The figures do not depend on the machine (only the time taken,
 * on stderr). `npm run bench:candle-path`.
 */
import { runJob } from '../src/backtest/job.js';
import { DEFAULT_JOB_SETTINGS, type JobSettings } from '../src/backtest/job-settings.js';
import { readConfigs } from '../src/backtest/strategy-configs.js';
import { loadTicks, type TickData } from '../src/backtest/tick-data.js';
import { CANDLE_PATHS } from '../src/sim/candle-path.js';
import { valueAt } from '../src/backtest/number-column.js';

const flag = (name: string, fallback: string) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? fallback : (process.argv[i + 1] as string);
};
const files = flag('--data', 'data/samples/BTCUSDT-2023-03-01_21.jsonl.gz').split(',');
const quote = flag('--quote', 'USDT');

/** Each minute's low (epoch minute -> lowest recorded price), from the ticks as recorded. */
function minuteLows(data: TickData): Map<number, number> {
  const lows = new Map<number, number>();
  const { time, price } = data.columns;
  for (let i = 0; i < data.length; i++) {
    const m = Math.floor(valueAt(time, i) / 60_000);
    const p = valueAt(price, i);
    if (!(p >= (lows.get(m) ?? Infinity))) lows.set(m, p);
  }
  return lows;
}

async function main(): Promise<void> {
  const data = await loadTicks(files);
  const lows = minuteLows(data);
  const symbol = data.symbols[0]!.symbol;
  const config = (name: string) => `bench/configs/${name}-${symbol.toLowerCase()}.json`;
  const rows: string[][] = [['path', 'strategy', 'buys', 'buys at the low', 'fills', 'final equity', 'return %']];
  const run = async (path: (typeof CANDLE_PATHS)[number], name: string, overrides: Record<string, unknown>) => {
    const { sources } = await readConfigs([config(name)], 'bench/strategies');
    const settings: JobSettings = {
      ...DEFAULT_JOB_SETTINGS,
      candlePath: path,
      everyTick: true,
      // At zero fees and no cost of size: what is measured is what the path gives away.
      participation: null,
      makerFee: '0',
      takerFee: '0',
      balances: { [quote]: '10000' },
    };
    const t0 = performance.now();
    const { run, summary } = await runJob(sources, data, settings, overrides);
    const buys = run.fills.filter((f) => f.side === 'BUY');
    const atLow = buys.filter((f) => f.price.toNumber() === lows.get(Math.floor(f.time / 60_000))).length;
    const m = summary.metrics;
    rows.push([path, name, String(buys.length), String(atLow), String(m.fills), m.finalEquity, m.totalReturnPct]);
    process.stderr.write(`${path} / ${name}: ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
    return buys.length;
  };
  const minutes = lows.size;
  for (const path of CANDLE_PATHS) {
    const buys = await run(path, 'inside-candle', {});
    // A minute after a buy is spent selling: the coin is tossed in the other minutes, at this rate to buy as often.
    await run(path, 'coin-flip', { rate: buys / (minutes - buys) });
  }
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  for (const r of rows) console.log(r.map((cell, c) => cell.padEnd(widths[c]!)).join('  '));
}

await main();
