/**
 * `npm run bench:slow-answer [-- --rounds 5 --timeout-ms 10000]`: how long one slow answer holds trading up
 * (issue 36: an answer trickling a byte a second froze every job for 60 s, a 100 MB one for 32 s). The daemon
 * (MODE=live, a real process) churns a marketable order a second through the fault proxy on `bot sim`; round by
 * round the proxy makes the next read's answer trickle (a byte a second) or carry 100 MB, and the bench prints
 * how long after that answer began the next order reached the exchange, beside the gaps between orders while
 * all is well. Then the same with the balance read alone trickling (the read after each fill). EXCHANGE_TIMEOUT_MS is the shipped default (10 s) unless --timeout-ms says otherwise.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { FaultProxy, SLOW_ANSWERS } from '../test/chaos/fault-proxy.js';
import { chaosEnv, churnFile, sleep } from '../test/chaos/run-files.js';
import { freshCredentials, SimProcess } from '../test/chaos/sim-process.js';
import { DaemonProcess, waitFor, writeSwingRecording } from '../test/e2e/daemon-process.js';
import { deadline } from '../test/support/until.js';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '5' }, 'timeout-ms': { type: 'string', default: '10000' } },
});
const ROUNDS = Number(values.rounds);
const TIMEOUT_MS = Number(values['timeout-ms']);
if (!(ROUNDS >= 1) || !(TIMEOUT_MS > 0)) {
  console.error('bench:slow-answer: --rounds and --timeout-ms must be positive numbers');
  process.exit(2);
}

const dir = mkdtempSync(join(tmpdir(), 'bench-slow-answer-'));
const credentials = freshCredentials();
const recording = join(dir, 'BTCUSDT-swing.jsonl.gz');
await writeSwingRecording(recording, { count: 600, amplitudePct: 0.5 });
const sim = await SimProcess.start(
  ['--data', recording, '--loop', '--speed', '1', '--balance', 'USDT=100000,BTC=5'],
  credentials,
);
// A trickled byte every quarter of the hold: one a second.
const proxy = await FaultProxy.start(sim.url!, 4_000);
mkdirSync(join(dir, 'config'));
writeFileSync(join(dir, 'config', 'churn.json'), churnFile('churn'));
const daemon = new DaemonProcess(
  chaosEnv(dir, proxy.url, credentials, 2_000, { EXCHANGE_TIMEOUT_MS: String(TIMEOUT_MS), LOG_LEVEL: 'warn' }),
);
const wait = <T>(what: string, check: () => T | undefined | false) =>
  waitFor(what, check, { daemon, giveUp: deadline(120_000) });

const seconds = (ms: number) => (ms / 1000).toFixed(1);
const lines: string[] = [];
try {
  await wait('orders flowing', () => proxy.creates.length >= 5);
  const healthy: number[] = [];
  // The two slow answers on whichever read comes next, then on the balance read (the one the daemon makes after
  // each fill, outside the engine's lock: what it holds up is what the line says).
  const cases = [
    ...SLOW_ANSWERS.map((fault) => ({
      fault,
      path: undefined,
      label: fault === 'trickle' ? 'a read trickling a byte a second' : 'a read of 100 MB',
    })),
    { fault: 'trickle' as const, path: '/api/v4/user/balance', label: 'the balance read trickling a byte a second' },
  ];
  for (const { fault, path, label } of cases) {
    const after: number[] = [];
    const routes = new Set<string>();
    for (let round = 0; round < ROUNDS; round++) {
      // A few healthy seconds first: the gaps between orders then are the baseline.
      const from = proxy.creates.length;
      await sleep(4_000);
      const calm = proxy.creates.slice(Math.max(from - 1, 0));
      for (let i = 1; i < calm.length; i++) healthy.push((calm[i] as number) - (calm[i - 1] as number));
      await proxy.set(fault, 1, path);
      const { at, route } = await wait(`the ${fault} answer`, () => proxy.injection);
      routes.add(route.replace(/^GET \/api\/v\d\/(spot\/)?/, ''));
      const next = await wait(`an order after the ${fault} answer`, () => proxy.creates.find((t) => t > at));
      after.push(next - at);
    }
    const sorted = [...after].sort((a, b) => a - b);
    lines.push(
      `  ${label}: the next order ` +
        `${seconds(sorted[0] as number)} to ${seconds(sorted[sorted.length - 1] as number)} s after it began ` +
        `(median ${seconds(sorted[Math.floor(sorted.length / 2)] as number)} s, ${ROUNDS} rounds; ` +
        `the reads slowed: ${[...routes].join(', ')})`,
    );
  }
  const calm = [...healthy].sort((a, b) => a - b);
  lines.push(
    `  all well: an order every ${seconds(calm[Math.floor(calm.length / 2)] ?? 0)} s (median), ` +
      `longest gap ${seconds(calm[calm.length - 1] ?? 0)} s`,
  );
} finally {
  await daemon.stop('SIGTERM');
  await proxy.close();
  await sim.stop();
  rmSync(dir, { recursive: true, force: true });
}
console.log(
  [
    `slow answers: the daemon churning an order a second through the fault proxy, EXCHANGE_TIMEOUT_MS ${TIMEOUT_MS}`,
    ...lines,
    `  load average 1/5/15 min at the end: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  ].join('\n'),
);
