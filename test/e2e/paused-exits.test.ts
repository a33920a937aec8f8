/**
 * Protection outlives decisions (design.md invariant 13), through a real paper daemon on the live prices of an
 * upstream exchange: an instance holding a position is paused through the control API with its orders cancelled.
 * The stop the engine holds for its declared stop-loss stays on the paper exchange; when the price gaps under
 * that stop's limit (where it cannot fill), the declared stop-loss still acts on the ticks: the held stop is
 * cancelled and the position sold at market, once, and the instance stays paused.
 */
import { describe, expect, it } from 'vitest';
import { DaemonProcess, heldStopOnPaper, http, paperLiveUpstream, readDb, waitFor } from './daemon-process.js';
import { freePort } from '../support/free-port.js';

const TOKEN = 'e2e-paused-exits-token-7e21';
const suite = paperLiveUpstream('e2e-paused-exits-', 20_000);
const { db, price } = suite;

const orders = () =>
  readDb(db, (d) =>
    d.prepare("SELECT type, tag, status FROM orders WHERE instance = 'guarded' ORDER BY seq").all(),
  ) as { type: string; tag: string; status: string }[];

describe('a paused instance, in a paper daemon', () => {
  it('keeps its held stop through a pause that cancels its orders, and its stop-loss sells while paused', async () => {
    const port = await freePort();
    const env = {
      // stop-guarded buys once and declares stopLossPct 2, which the engine holds on the exchange.
      ...suite.env({
        'guarded.json': JSON.stringify({
          name: 'guarded',
          strategy: 'stop-guarded',
          symbol: 'BTCUSDT',
          schedule: '* * * * * *',
        }),
      }),
      API_PORT: String(port),
      API_TOKEN: TOKEN,
    };
    const api = (path: string, body?: unknown) =>
      http(`http://127.0.0.1:${port}${path}`, {
        token: TOKEN,
        ...(body === undefined ? {} : { method: 'POST', body }),
      });
    const daemon = new DaemonProcess(env);
    await waitFor('the stop held on the paper exchange', () => heldStopOnPaper(db)?.status === 'NEW', { daemon });
    await waitFor('the control API', () => daemon.messages(/control API and dashboard on/).length > 0, { daemon });

    const paused = await api('/api/v1/instances/guarded/pause', { cancelOrders: true });
    expect(paused.body).toMatchObject({ ok: true, outcome: 'paused' });
    expect(heldStopOnPaper(db)?.status).toBe('NEW');

    // 5 % down: through the held stop (2 % under the entry) and under its limit (0.5 % under the stop).
    price(19_000);
    await waitFor('the declared stop-loss to sell', () => orders().at(-1)?.status === 'FILLED' && orders().length > 2, {
      daemon,
    });
    expect(orders()).toEqual([
      { type: 'MARKET', tag: 'entry', status: 'FILLED' },
      { type: 'STOP_LIMIT', tag: 'exit:stop-loss', status: 'CANCELED' },
      { type: 'MARKET', tag: 'exit:stop-loss', status: 'FILLED' },
    ]);
    const events = readDb(db, (d) =>
      d.prepare("SELECT kind FROM events WHERE instance = 'guarded' AND kind = 'exit-triggered'").pluck().all(),
    );
    expect(events).toEqual(['exit-triggered']);
    const instances = (await api('/api/v1/instances')).body as { instances: { instance: string; state: string }[] };
    expect(instances.instances.find((i) => i.instance === 'guarded')?.state).toBe('paused');
    expect(await daemon.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  }, 120_000);
});
