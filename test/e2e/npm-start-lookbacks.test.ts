/**
 * `npm start` on a clean checkout, as a new user runs it (issue 20): paper on the shipped recordings at the
 * default PAPER_SPEED (60), the shipped strategy files and strategies, a new database. The strategies run on
 * the recording's time, so every shipped lookback the data fills at that pace is full within three wall
 * minutes and the instance trades: grid and DCA from the first ticks, mean reversion after its 60 recorded
 * minutes, breakout after its 120 (two wall minutes). Each one's first order placed is the sign its lookback is
 * full: each places one as soon as it has its window (an entry at the band, an entry stop above the recent
 * high). The EMA trend's shipped 26 hourly candles are 26 recorded hours (26 wall minutes at 60x): it is only
 * checked to be running. `bot status`, another process, then tells the recording's time beside the wall's.
 */
import { type ChildProcess, execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { daemonEnv, npmStart, ROOT, waitFor } from './daemon-process.js';

const dir = mkdtempSync(join(tmpdir(), 'e2e-npm-start-lookbacks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The shipped instances whose lookback the sample fills within three wall minutes at 60x. */
const TRADING = ['grid-btcusdt', 'dca-btcusdt', 'mean-reversion-btcusdt', 'breakout-btcusdt'];
/** The issue's bound: every lookback full within the first three wall minutes. */
const BOUND_MS = 180_000;

describe.runIf(process.platform === 'linux')('npm start on the shipped recordings', () => {
  let npm: ChildProcess | undefined;
  afterAll(() => {
    if (npm?.pid !== undefined && npm.exitCode === null) process.kill(-npm.pid, 'SIGKILL');
  });

  it(
    "fills every shipped lookback the data allows within three wall minutes, and status tells the recording's time",
    async () => {
      const db = join(dir, 'bot.db');
      // Only the test's own files and the listener are set: the config, strategies, data and speed are the shipped ones.
      const started = npmStart(
        daemonEnv({ DB_PATH: db, KILL_SWITCH_FILE: join(dir, 'KILL'), ORDERS_POLL: '*/5 * * * * *' }),
      );
      npm = started.npm;
      const { lines } = started;
      const placed = (instance: string) =>
        lines.some((l) => l.includes(`"instance":"${instance}"`) && l.includes('"msg":"order placed"'));

      await waitFor(
        `each of ${TRADING.join(', ')} to place its first order`,
        () => TRADING.every(placed) || lines.some((l) => l.includes('"level":50')),
        { ms: BOUND_MS },
      );
      expect(lines.filter((l) => l.includes('"level":50'))).toEqual([]);
      expect(TRADING.filter((i) => !placed(i))).toEqual([]);
      expect(lines.join('\n')).toMatch(/PAPER TRADING on recorded data .*BTCUSDT-2023-03-01_21\.jsonl\.gz at 60x/);

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
      // Breakout's 120 recorded minutes have passed on the recording's clock (it starts at 00:00 on 1 March).
      const [first] = (await status()).split('\n');
      expect(first).toMatch(
        /^status at venue 2023-03-01 0[2-4]:\d\d:\d\d UTC \(the recording's time\) · wall \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/,
      );
      const json = JSON.parse(await status('--json')) as {
        clock: { venueClock: string; venue: string; wall: string };
        daemon: { clock: string; since: string };
        instances: { instance: string; state: string; todaysFills: unknown[] }[];
      };
      expect(json.clock.venueClock).toBe('data');
      expect(Date.parse(json.clock.venue)).toBeGreaterThanOrEqual(Date.parse('2023-03-01T02:00:00Z'));
      // When the daemon started is the wall's; today's fills are the data's day's (the wall's would have none).
      expect(Date.now() - Date.parse(json.daemon.since)).toBeLessThan(BOUND_MS + 60_000);
      expect(json.instances.map((i) => [i.instance, i.state])).toContainEqual(['ema-trend-btcusdt', 'running']);
      expect(json.instances.reduce((n, i) => n + i.todaysFills.length, 0)).toBeGreaterThan(0);

      const exited = new Promise((resolve) => npm!.once('exit', resolve));
      process.kill(npm.pid!, 'SIGTERM');
      await exited;
      expect(lines.join('\n')).toContain('stopped: database closed');
    },
    BOUND_MS + 60_000,
  );
});
