/**
 * `npm start` on a clean checkout, as a new user runs it (issue 20): paper on the shipped recordings at the
 * default PAPER_SPEED (60), the shipped strategy files and strategies, a new database. The strategies run on
 * the recording's time, and a new replay starts once the recording's data have filled the longest warm-up the
 * configured strategies declare (the EMA trend's 104 hourly candles and a day: 2023-03-06 09:00), their candles
 * and indicators warmed up on the data before it, so every shipped lookback is full within the first three wall
 * minutes. Checked for EVERY shipped strategy file (config/*.json): one whose lookback is candles (the EMA
 * trend, breakout's recent high, mean reversion's average) has them all in the candles the daemon saves, closed
 * and recent; one that has none (grid, DCA) places its first order. `bot status`, another process, then tells
 * the recording's time beside the wall's.
 */
import { type ChildProcess, execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { loadStrategyFiles } from '../../src/config/loader.js';
import { type CandleNeeds, TIMEFRAME_MS, type Timeframe } from '../../src/market/candles.js';
import { candleNeeds } from '../../src/strategy/candle-needs.js';
import { daemonEnv, npmStart, readDb, ROOT, waitFor } from './daemon-process.js';
import { whenExited } from '../support/until.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('e2e-npm-start-lookbacks');

/** The issue's bound: every lookback full within the first three wall minutes. */
const BOUND_MS = 180_000;

interface SavedCandles {
  series: { timeframe: Timeframe; closed: { time: number }[] }[];
}

/** What of `needs` the candles the daemon last saved for `symbol` lack, at the venue time `now` ([] when none). */
function missingCandles(db: string, symbol: string, needs: CandleNeeds, now: number): string[] {
  const saved = readDb(db, (d) => d.prepare('SELECT snapshot FROM candles WHERE symbol = ?').pluck().get(symbol)) as
    string | undefined;
  const series = saved === undefined ? [] : (JSON.parse(saved) as SavedCandles).series;
  const missing: string[] = [];
  for (const [tf, count] of Object.entries(needs) as [Timeframe, number][]) {
    const closed = series.find((s) => s.timeframe === tf)?.closed ?? [];
    // As many as the strategy needs, the newest closed within two candles of now (none skipped at the start).
    const newest = closed.at(-1)?.time ?? -Infinity;
    if (closed.length < count || newest < now - 2 * TIMEFRAME_MS[tf])
      missing.push(`${symbol} ${tf}: ${closed.length} closed of ${count}`);
  }
  return missing;
}

describe.runIf(process.platform === 'linux')('npm start on the shipped recordings', () => {
  let npm: ChildProcess | undefined;
  afterAll(() => {
    if (npm?.pid !== undefined && npm.exitCode === null) process.kill(-npm.pid, 'SIGKILL');
  });

  it(
    "fills every shipped strategy's lookback within three wall minutes, and status tells the recording's time",
    async () => {
      // Every shipped strategy file npm start runs (the enabled ones: the many-pair file is off by default, its
      // pairs not in the shipped recording), and what its lookback is: candles (declared) or the strategy's own state.
      const shipped = readdirSync(join(ROOT, 'config')).filter((f) => f.endsWith('.json'));
      const all = await loadStrategyFiles(join(ROOT, 'config'));
      expect(new Set(all.map((i) => i.file)).size).toBe(shipped.length);
      const instances = all.filter((i) => i.config.enabled);
      expect(instances.map((i) => i.config.symbol)).toEqual(instances.map(() => 'BTCUSDT'));
      const onCandles = instances
        .map((i) => ({ name: i.config.name, symbol: i.config.symbol, needs: candleNeeds(i.definition, i.params) }))
        .filter((i) => Object.keys(i.needs).length > 0);
      const trading = instances.map((i) => i.config.name).filter((n) => !onCandles.some((c) => c.name === n));
      expect(onCandles.map((i) => i.name).sort()).toEqual([
        'breakout-btcusdt',
        'ema-trend-btcusdt',
        'mean-reversion-btcusdt',
      ]);

      const db = join(dir, 'bot.db');
      const wallStart = Date.now();
      // Only the test's own files and the listener are set: the config, strategies, data and speed are the shipped ones.
      const started = npmStart(
        daemonEnv({ DB_PATH: db, KILL_SWITCH_FILE: join(dir, 'KILL'), ORDERS_POLL: '*/5 * * * * *' }),
      );
      npm = started.npm;
      const { lines } = started;
      const placed = (instance: string) =>
        lines.some((l) => l.includes(`"instance":"${instance}"`) && l.includes('"msg":"order placed"'));
      const venueNow = () =>
        readDb(db, (d) => d.prepare('SELECT MAX(time) FROM last_prices').pluck().get()) as number | null;
      const missing = () => {
        const now = venueNow();
        if (now === null) return ['no price yet'];
        return onCandles.flatMap((i) => missingCandles(db, i.symbol, i.needs, now));
      };

      let lacking: string[] = [];
      await waitFor(
        `each of ${trading.join(', ')} to place its first order and the candles of ${onCandles.map((i) => i.name).join(', ')}`,
        () => {
          if (lines.some((l) => l.includes('"level":50'))) return true;
          if (!trading.every(placed)) return false;
          lacking = missing();
          return lacking.length === 0;
        },
        { giveUp: whenExited(started.npm, 'npm start') },
      );
      const wallTaken = Date.now() - wallStart;
      expect(lines.filter((l) => l.includes('"level":50'))).toEqual([]);
      expect(trading.filter((i) => !placed(i))).toEqual([]);
      expect(lacking).toEqual([]);
      expect(wallTaken).toBeLessThan(BOUND_MS);
      const text = lines.join('\n');
      expect(text).toMatch(/PAPER TRADING on recorded data .*BTCUSDT-2023-03-01_21\.jsonl\.gz at 60x/);
      // Where the replay started: once the recording (from 2023-03-01 00:00) has filled the EMA trend's 140
      // hourly candles (its RSI(14) converged) and a day, the data before it warming the candles up.
      const start =
        /the replay starts at ([\dTZ:.-]+) \(the recording's time\); the strategies' candles warmed up on the data from ([\dTZ:.-]+)/.exec(
          text,
        );
      expect(start?.slice(1)).toEqual(['2023-03-07T21:00:00.000Z', '2023-03-01T00:00:00.000Z']);
      const replayFrom = Date.parse(start![1]!);

      const status = async (...args: string[]) =>
        (
          await promisify(execFile)(
            process.execPath,
            ['--import', 'tsx', 'src/cli.ts', 'status', '--db', db, ...args],
            {
              cwd: ROOT,
              env: daemonEnv({}),
            },
          )
        ).stdout;
      const [first] = (await status()).split('\n');
      expect(first).toMatch(
        /^status at venue 2023-03-(07 2[1-3]|08 0[01]):\d\d:\d\d UTC \(the recording's time\) · wall \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/,
      );
      const json = JSON.parse(await status('--json')) as {
        clock: { venueClock: string; venue: string; wall: string };
        daemon: { clock: string; since: string };
        instances: { instance: string; state: string; todaysFills: unknown[] }[];
      };
      expect(json.clock.venueClock).toBe('data');
      expect(Date.parse(json.clock.venue)).toBeGreaterThanOrEqual(replayFrom);
      // When the daemon started is the wall's; today's fills are the data's day's (the wall's would have none).
      expect(Date.now() - Date.parse(json.daemon.since)).toBeLessThan(BOUND_MS + 60_000);
      expect(json.instances).toHaveLength(instances.length);
      expect(json.instances.filter((i) => i.state !== 'running')).toEqual([]);
      expect(json.instances.reduce((n, i) => n + i.todaysFills.length, 0)).toBeGreaterThan(0);

      const exited = new Promise((resolve) => npm!.once('exit', resolve));
      process.kill(npm.pid!, 'SIGTERM');
      await exited;
      expect(lines.join('\n')).toContain('stopped: database closed');
    },
    BOUND_MS + 60_000,
  );
});
