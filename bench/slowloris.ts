/**
 * `npm run bench:slowloris [-- --connections 1000]`: the daemon's own listener under slow connections (issue 36:
 * 2 x 10,500 of them once filled the daemon's file descriptors, and the operator's API and readyz timed out). A
 * paper daemon as `npm start` runs it (its API on one port, its metrics on another); the bench opens
 * `--connections` connections to the API port, each sending a request line and then one header byte a second,
 * never ending its headers, while it asks /healthz twice a second on both ports. Printed, not asserted: how many
 * connections the listener held at once and how many it closed at once, how long after opening the held ones were
 * cut, what /healthz answered on each port meanwhile, and the daemon's log lines about shedding load.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DaemonProcess, daemonEnv, waitFor } from '../test/e2e/daemon-process.js';
import { freePort } from '../test/support/free-port.js';
import { deadline } from '../test/support/until.js';

const { values } = parseArgs({ options: { connections: { type: 'string', default: '1000' } } });
const CONNECTIONS = Number(values.connections);
if (!(CONNECTIONS >= 1)) {
  console.error('bench:slowloris: --connections must be a positive number');
  process.exit(2);
}

interface Slow {
  opened: number;
  closed: number | undefined;
  /** Bytes the daemon wrote back (a 408 when it cuts the headers short). */
  answered: boolean;
}

/** One connection that sends a request line, then a header byte a second, never ending its headers. */
function trickle(port: number, timers: NodeJS.Timeout[]): Slow {
  const slow: Slow = { opened: Date.now(), closed: undefined, answered: false };
  const socket: Socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  socket.on('data', () => (slow.answered = true));
  socket.on('close', () => (slow.closed = Date.now()));
  socket.on('connect', () => {
    socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
    const timer = setInterval(() => (socket.destroyed ? clearInterval(timer) : socket.write('a')), 1_000);
    timers.push(timer);
  });
  return slow;
}

/** One GET /healthz on a connection of its own: its status and time, or why it failed (2 s at most). */
function healthz(port: number): Promise<{ ok: boolean; ms: number; what: string }> {
  const start = Date.now();
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/healthz', agent: false, timeout: 2_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve({ ok: res.statusCode === 200, ms: Date.now() - start, what: `${res.statusCode}` }));
    });
    req.on('timeout', () => req.destroy(new Error('no answer in 2 s')));
    req.on('error', (err: NodeJS.ErrnoException) =>
      resolve({ ok: false, ms: Date.now() - start, what: err.code ?? err.message }),
    );
    req.end();
  });
}

/** A log line's message (the daemon logs JSON lines). */
function logMessage(line: string): string {
  try {
    return String((JSON.parse(line) as { msg?: unknown }).msg);
  } catch {
    return line;
  }
}

const seconds = (ms: number) => (ms / 1000).toFixed(1);
const quantiles = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] as number;
  return s.length === 0 ? 'none' : `${seconds(at(0))} / ${seconds(at(0.5))} / ${seconds(s[s.length - 1] as number)} s`;
};

const dir = mkdtempSync(join(tmpdir(), 'bench-slowloris-'));
const [apiPort, metricsPort] = [await freePort(), await freePort()];
const daemon = new DaemonProcess(
  daemonEnv({
    DB_PATH: join(dir, 'bot.db'),
    KILL_SWITCH_FILE: join(dir, 'KILL'),
    API_PORT: String(apiPort),
    METRICS_PORT: String(metricsPort),
  }),
);
const lines: string[] = [];
const timers: NodeJS.Timeout[] = [];
try {
  const giveUp = deadline(120_000);
  await waitFor('the control API', () => daemon.messages(/control API and dashboard on/).length > 0, {
    daemon,
    giveUp,
  });
  const calm = await healthz(apiPort);
  const slow: Slow[] = [];
  const probes: {
    at: number;
    api: Awaited<ReturnType<typeof healthz>>;
    metrics: Awaited<ReturnType<typeof healthz>>;
  }[] = [];
  const began = Date.now();
  for (let i = 0; i < CONNECTIONS; i++) {
    slow.push(trickle(apiPort, timers));
    if (i % 100 === 99) await new Promise((r) => setTimeout(r, 10));
  }
  const open = () => slow.filter((s) => s.closed === undefined).length;
  // Until every slow connection is closed (or a minute): /healthz on both ports twice a second.
  const until = deadline(60_000);
  while (open() > 0 && until() === undefined) {
    const [api, metrics] = await Promise.all([healthz(apiPort), healthz(metricsPort)]);
    probes.push({ at: Date.now() - began, api, metrics });
    await new Promise((r) => setTimeout(r, 500));
  }
  // Held: the daemon took the connection and cut it at its headers timeout (a 408); shed: closed unanswered.
  const held = slow.filter((s) => s.answered);
  const shed = slow.filter((s) => !s.answered && s.closed !== undefined);
  const after = (xs: Slow[]) => xs.map((s) => (s.closed ?? Date.now()) - s.opened);
  const lastCut = Math.max(...held.map((s) => (s.closed ?? Date.now()) - began), 0);
  const full = probes.filter((p) => p.at <= lastCut);
  const told = (xs: typeof probes, side: 'api' | 'metrics') => {
    const ok = xs.filter((p) => p[side].ok);
    const failed = [...new Set(xs.filter((p) => !p[side].ok).map((p) => p[side].what))];
    const ms = ok.map((p) => p[side].ms).sort((a, b) => a - b);
    return (
      `${ok.length} of ${xs.length} answered 200` +
      (ms.length > 0 ? ` (median ${ms[Math.floor(ms.length / 2)]} ms)` : '') +
      (failed.length > 0 ? `; the others: ${failed.join(', ')}` : '')
    );
  };
  lines.push(
    `  ${CONNECTIONS} connections opened in ${seconds(slow[slow.length - 1]!.opened - began)} s`,
    `  held by the listener (cut at its headers timeout with a 408): ${held.length}, cut after (min / median / max) ${quantiles(after(held))}`,
    `  shed (closed unanswered, the listener full): ${shed.length}, closed after ${quantiles(after(shed))}; still open after a minute: ${open()}`,
    `  /healthz while the held ones were open (${full.length} probes): API port ${told(full, 'api')}; metrics port ${told(full, 'metrics')}`,
    `  /healthz over the whole run (${probes.length} probes): API port ${told(probes, 'api')}; metrics port ${told(probes, 'metrics')}`,
    `  /healthz before: ${calm.what} in ${calm.ms} ms`,
    `  the daemon's log about it: ${
      daemon
        .messages(/shedding load|listener .* connections/)
        .map((m) => `"${logMessage(m)}"`)
        .join('; ') || 'nothing'
    }`,
  );
} finally {
  for (const t of timers) clearInterval(t);
  await daemon.stop('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
console.log(
  [
    `slowloris: a paper daemon's API listener (API_PORT) under connections trickling a header byte a second`,
    ...lines,
    `  load average 1/5/15 min at the end: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  ].join('\n'),
);
