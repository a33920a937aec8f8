/**
 * Issue 28, "a deleted journal": the daemon runs live against a separate `bot sim` process with resting orders;
 * its database file is deleted under it. It stops trading with an error line, /readyz 503 naming the journal
 * and a notification. Started again on the same path (an empty journal, the account's orders still open), it
 * refuses to trade until the operator says how: with --adopt-open-orders it journals them and runs.
 */
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { Receiver } from '../notify/stand-ins.js';
import { DaemonProcess, daemonEnv, http, journal, liveEnv, restingFile, waitFor } from './daemon-process.js';
import { freePort } from '../support/free-port.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('e2e-journal-lost');
const processes: DaemonProcess[] = [];
let receiver: Receiver | undefined;
afterAll(async () => {
  for (const p of processes) if (!p.exit) await p.stop('SIGTERM');
  await receiver?.close();
});

const TOKEN = 'journal-lost-test-token-0123456789';

function track(p: DaemonProcess): DaemonProcess {
  processes.push(p);
  return p;
}

it('stops trading when its database file is deleted, and a restart on an empty journal waits for the operator', async () => {
  const sim = track(new DaemonProcess(daemonEnv({}), ['sim', '--port', '0', '--random-walk', '--seed', '5']));
  await waitFor('the simulated exchange', () => sim.messages(/http:\/\/127\.0\.0\.1:\d+/).length > 0, {
    daemon: sim,
  });
  const simUrl = /http:\/\/127\.0\.0\.1:\d+/.exec(sim.messages(/http:\/\/127\.0\.0\.1:\d+/)[0] ?? '')?.[0] ?? '';
  receiver = await Receiver.start();
  const config = join(dir, 'config');
  mkdirSync(config);
  writeFileSync(join(config, 'rest.json'), restingFile(3));
  const db = join(dir, 'live.db');
  const apiPort = await freePort();
  const url = `http://127.0.0.1:${apiPort}`;
  const env = liveEnv(simUrl, dir, {
    DB_PATH: db,
    API_PORT: String(apiPort),
    NOTIFY_WEBHOOK_URL: receiver.url,
    NOTIFY_WEBHOOK_SECRET: 'webhook-secret-for-the-test',
  });
  const first = track(new DaemonProcess(env));
  await waitFor('three resting orders', () => journal(db).filter((r) => r.status === 'OPEN').length === 3, {
    daemon: first,
  });
  await waitFor('ready', async () => (await http(`${url}/readyz`)).status === 200, { daemon: first });

  rmSync(db);
  await waitFor('the loss logged', () => first.messages(/trading stopped: database file .* was deleted/).length > 0, {
    daemon: first,
  });
  const ready = await http(`${url}/readyz`);
  expect(ready.status).toBe(503);
  expect(ready.body).toMatchObject({
    checks: expect.arrayContaining([
      expect.objectContaining({ name: 'journal', ok: false, detail: expect.stringMatching(/was deleted/) as string }),
    ]) as unknown,
  });
  await waitFor('the notification', () => receiver!.received.some((m) => /JOURNAL LOST/.test(m.body)), {
    daemon: first,
  });
  expect(first.messages(/trading stopped: database file/)).toHaveLength(1);
  expect(await first.stop('SIGTERM')).toEqual({ code: 0, signal: null });

  // The same path again: a new, empty journal; the account's three orders are still open.
  const second = track(new DaemonProcess(env));
  expect(await second.exited).toEqual({ code: 1, signal: null });
  const refusal = second.messages(/the journal is empty and the account has 3 open order\(s\) \(BTCUSDT 3\)/);
  expect(refusal).toHaveLength(1);
  expect(refusal[0]).toMatch(/--adopt-open-orders/);
  // A start that fails leaves the database as it was: none there.
  expect(existsSync(db)).toBe(false);

  const third = track(new DaemonProcess({ ...env, API_TOKEN: TOKEN }, ['run', '--adopt-open-orders']));
  await waitFor('running', () => third.messages(/daemon running/).length > 0, { daemon: third });
  const rows = journal(db);
  expect(rows.filter((r) => r.local_id.startsWith('ext-'))).toHaveLength(3);

  // Issue 27: another bot may be trading this account: one log line, one notification, status and the API.
  const told =
    /another bot may be trading this account: 3 open order\(s\) on it were not placed by this bot \(BTCUSDT 3\)/;
  expect(third.messages(told)).toHaveLength(1);
  await waitFor('the notification', () => receiver!.received.some((m) => /ANOTHER BOT MAY BE TRADING/.test(m.body)), {
    daemon: third,
  });
  const api = await http(`${url}/api/v1/status`, { token: TOKEN });
  expect(api.body).toMatchObject({ foreignOrders: { total: 3, symbols: { BTCUSDT: 3 }, journaled: 3, untracked: 0 } });
  const status = track(new DaemonProcess(env, ['status', '--db', db]));
  expect(await status.exited).toEqual({ code: 0, signal: null });
  expect(status.messages(/ANOTHER BOT MAY BE TRADING THIS ACCOUNT: 3 open order\(s\)/)).toHaveLength(1);
  // Polls go on (one a second): nothing more is said while the same orders stay open.
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  expect(third.messages(told)).toHaveLength(1);
  expect(receiver.received.filter((m) => /ANOTHER BOT MAY BE TRADING/.test(m.body))).toHaveLength(1);
  expect(await third.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  // Three daemon starts, a simulated exchange and a receiver: about 14 s on a loaded machine, more under a full suite.
}, 90_000);
