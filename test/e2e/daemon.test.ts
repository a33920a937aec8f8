/**
 * `npm start`'s daemon end to end, as a real process in paper mode: the embedded simulated exchange replays a
 * recording, the signed client places every order type on it, fills land in SQLite, SIGTERM stops it with
 * exit 0, and `bot status` reads the result from the database alone.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DaemonProcess,
  daemonEnv,
  everyOrderFile,
  journal,
  readDb,
  ROOT,
  waitFor,
  lockstepPaperEnv,
} from './daemon-process.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('e2e-daemon');

describe('the daemon in paper mode (embedded simulated exchange)', () => {
  const db = join(dir, 'bot.db');

  it('places every order type through the signed client, records the fills, and stops on SIGTERM with exit 0', async () => {
    const daemon = new DaemonProcess(
      await lockstepPaperEnv(
        dir,
        {
          'all.json': everyOrderFile('all-types', { near: 20_000 }),
          'off.json': JSON.stringify({ ...JSON.parse(everyOrderFile('off')), enabled: false }),
        },
        { period: 7 },
      ),
    );
    try {
      const filledTypes = await waitFor(
        'a fill of every order type',
        () => {
          const types = new Set(
            journal(db)
              .filter((r) => Number(r.filled_qty) > 0)
              .map((r) => r.type),
          );
          return types.size === 4 ? [...types].sort() : undefined;
        },
        { daemon },
      );
      expect(filledTypes).toEqual(['LIMIT', 'MARKET', 'OCO', 'STOP_LIMIT']);
    } finally {
      expect(await daemon.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    }
    const log = daemon.lines.join('\n');
    expect(log).toMatch(
      /PAPER TRADING on recorded data \(simulated exchange at http:\/\/127\.0\.0\.1:\d+\): .*swing\.jsonl\.gz at one tick per market poll/,
    );
    expect(log).toContain('all-types: every-order on BTCUSDT, schedule * * * * * *, paper');
    expect(log).not.toContain('off: every-order');
    expect(daemon.messages(/"msg":"fill recorded"/).length).toBeGreaterThanOrEqual(4);
    expect(daemon.messages(/"msg":"stopped: database closed"/)).toHaveLength(1);

    const rows = journal(db);
    // One order per intent: each tag once, each with the exchange's id.
    expect(rows.map((r) => r.tag).sort()).toEqual(['limit', 'market', 'oco', 'stop']);
    expect(rows.every((r) => r.exchange_id !== null)).toBe(true);
    const fillOrders = readDb(db, (d) => d.prepare('SELECT DISTINCT order_local_id FROM fills').pluck().all());
    expect(fillOrders).toHaveLength(4);
    const kinds = readDb(db, (d) =>
      d.prepare("SELECT kind FROM events WHERE kind LIKE 'daemon-%' ORDER BY id").pluck().all(),
    );
    expect(kinds).toEqual(['daemon-started', 'daemon-stopped']);
    const price = readDb(db, (d) => d.prepare("SELECT price FROM last_prices WHERE symbol = 'BTCUSDT'").pluck().get());
    expect(Number(price)).toBeGreaterThan(19_000);
  });

  it('status reads that database alone: JSON for scripts, a table for people', () => {
    const status = (...args: string[]) =>
      spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'status', '--db', db, ...args], {
        cwd: ROOT,
        env: daemonEnv({ KILL_SWITCH_FILE: join(dir, 'KILL') }),
        encoding: 'utf8',
      });
    const json = status('--json');
    expect(json.status).toBe(0);
    const report = JSON.parse(json.stdout) as {
      daemon: { state: string; mode: string };
      instances: {
        instance: string;
        state: string;
        unrealisedPnl: string | null;
        position: { quantity: string; averagePrice: string };
        todaysFills: { price: string; quantity: string }[];
      }[];
      killSwitch: { filePresent: boolean };
    };
    expect(report.daemon).toMatchObject({ state: 'stopped', mode: 'paper' });
    expect(report.instances).toHaveLength(1);
    const [instance] = report.instances;
    expect(instance).toMatchObject({ instance: 'all-types', state: 'stopped' });
    expect(instance!.todaysFills.length).toBeGreaterThanOrEqual(4);
    // Rounded to the pair (tick 0.01, step 0.000001, quote precision 2) as the daemon stored its rules, though
    // this process never asked the venue: the average of four fills has more places than that.
    expect(readDb(db, (d) => d.prepare('SELECT symbol FROM pair_rules').pluck().all())).toEqual(['BTCUSDT']);
    expect(instance!.unrealisedPnl).toMatch(/^-?\d+(\.\d{1,2})?$/);
    expect(instance!.position.averagePrice).toMatch(/^\d+(\.\d{1,2})?$/);
    for (const f of instance!.todaysFills) {
      expect(f.price).toMatch(/^\d+(\.\d{1,2})?$/);
      expect(f.quantity).toMatch(/^\d+(\.\d{1,6})?$/);
    }
    expect(report.killSwitch.filePresent).toBe(false);

    const table = status();
    expect(table.status).toBe(0);
    expect(table.stdout).toMatch(/daemon: stopped at /);
    expect(table.stdout).toMatch(/^INSTANCE\s+STATE\s+OPEN\s+FILLS TODAY/m);
    expect(table.stdout).toMatch(/^all-types\s+stopped\s+\d+\s+\d+/m);

    const missing = status('--db', join(dir, 'nope.db'));
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('no database at');
  });
});
