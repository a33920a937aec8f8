/**
 * A pause holds across a restart (issue 36): a paper daemon (a real process) with two churning instances; the
 * operator pauses one through the control API, the daemon is stopped with SIGTERM and started again on the same
 * journal. The paused one stays paused with its reason and source (the start lists it, status says so) and
 * places nothing while the other trades on; resumed, it trades again, and the next restart runs it.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DaemonProcess, everyOrderFile, http, journal, lockstepPaperEnv, waitFor } from './daemon-process.js';
import { freePort } from '../support/free-port.js';
import { tempDir } from '../support/temp-dir.js';

const TOKEN = 'e2e-pause-restart-token-51c2';
const dir = tempDir('e2e-pause-restart');

const placed = (db: string, instance: string) => journal(db).filter((r) => r.instance === instance).length;

describe('a pause across a restart', () => {
  it('keeps the instance paused with its reason and source until the operator resumes it', async () => {
    const port = await freePort();
    const env = await lockstepPaperEnv(
      dir,
      { 'held.json': everyOrderFile('held', { churn: 1000 }), 'other.json': everyOrderFile('other', { churn: 1000 }) },
      { count: 4000 },
      { API_PORT: String(port), API_TOKEN: TOKEN },
    );
    const db = join(dir, 'bot.db');
    const api = (path: string, options: Parameters<typeof http>[1] = {}) =>
      http(`http://127.0.0.1:${port}${path}`, { token: TOKEN, ...options });
    const controlApi = (d: DaemonProcess) =>
      waitFor('the control API', () => d.messages(/control API and dashboard on/).length > 0, { daemon: d });
    const status = async (name: string) => {
      const body = (await api('/api/v1/instances')).body as {
        instances: { instance: string; state: string; reason?: string }[];
      };
      return body.instances.find((i) => i.instance === name);
    };

    const first = new DaemonProcess(env);
    await waitFor('both instances to trade', () => placed(db, 'held') >= 3 && placed(db, 'other') >= 3, {
      daemon: first,
    });
    await controlApi(first);
    const paused = await api('/api/v1/instances/held/pause', { method: 'POST', body: {} });
    expect(paused.body).toMatchObject({ ok: true, outcome: 'paused' });
    expect(await first.stop('SIGTERM')).toEqual({ code: 0, signal: null });

    const heldBefore = placed(db, 'held');
    const second = new DaemonProcess(env);
    await controlApi(second);
    // The start lists it, with why and who.
    const [line] = second.messages(/held: every-order on BTCUSDT.*stays PAUSED/);
    expect(JSON.parse(line!)).toMatchObject({
      instance: 'held',
      status: 'paused',
      reason: 'paused by the operator (api 127.0.0.1)',
      source: 'api 127.0.0.1',
    });
    expect(second.messages(/"msg":"paused since before this start: held"/)).toHaveLength(1);
    expect(await status('held')).toMatchObject({ state: 'paused', reason: 'paused by the operator (api 127.0.0.1)' });
    // The other trades on after the restart; the paused one places nothing.
    const otherAtStart = placed(db, 'other');
    await waitFor('the other instance to trade after the restart', () => placed(db, 'other') >= otherAtStart + 3, {
      daemon: second,
    });
    expect(placed(db, 'held')).toBe(heldBefore);

    const resumed = await api('/api/v1/instances/held/resume', { method: 'POST', body: {} });
    expect(resumed.body).toMatchObject({ ok: true, outcome: 'resumed' });
    await waitFor('the resumed instance to trade', () => placed(db, 'held') > heldBefore, { daemon: second });
    expect(await second.stop('SIGTERM')).toEqual({ code: 0, signal: null });

    // Resumed before the stop: the next start runs it.
    const third = new DaemonProcess(env);
    await controlApi(third);
    expect(third.messages(/stays PAUSED/)).toEqual([]);
    expect(await status('held')).toMatchObject({ state: 'running' });
    expect(await third.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  }, 240_000);
});
