/**
 * Fault injection: the daemon (a real process, MODE=live) trades through a fault proxy on `bot sim` (a real
 * process replaying a recording, which also proves the daemon records fills against the standalone simulator).
 * Phase by phase the proxy injects each fault for a while, then heals; for each phase the daemon stays up,
 * resumes placing orders within twice the configured pause (breaker pause and reconcile window) of the fault
 * ending, and writes a handful of warning lines per incident, not one per retry. At the end the journal and
 * fills are audited against the exchange's own history, trades and balances, and no output holds a secret.
 * It trades two pairs from one strategy file, so the faults land on the orders poll's shared reads of the
 * account's order and trade history too (no symbol, each pair taking its records: issue 41).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DaemonProcess, fillKeys, journal, waitFor, writeSwingRecording } from '../e2e/daemon-process.js';
import { auditAgainstExchange, pairCounts } from './exchange-audit.js';
import { FAULTS, FaultProxy } from './fault-proxy.js';
import { API_TOKEN, chaosEnv, churnFile, levelOf, sleep } from './run-files.js';
import { findSecrets, runFiles } from './secrets.js';
import { freshCredentials, SimProcess } from './sim-process.js';
import { tempDir } from '../support/temp-dir.js';

const PAUSE_MS = 2_000;
const PHASE_MS = Number(process.env.CHAOS_PHASE_MS ?? 2_500);
const SYMBOLS = ['BTCUSDT', 'ETHUSDT'];
const BALANCES = { USDT: '10000', BTC: '0.5', ETH: '5' };

const dir = tempDir('chaos-faults');
const credentials = freshCredentials();
let sim: SimProcess;
let proxy: FaultProxy;
let daemon: DaemonProcess | undefined;

beforeAll(async () => {
  const recordings = [join(dir, 'BTCUSDT-swing.jsonl.gz'), join(dir, 'ETHUSDT-swing.jsonl.gz')];
  await writeSwingRecording(recordings[0]!, { count: 600, amplitudePct: 0.5 });
  await writeSwingRecording(recordings[1]!, { symbol: 'ETHUSDT', mid: 1_500, count: 600, amplitudePct: 0.5 });
  sim = await SimProcess.start(
    ['--data', recordings.join(','), '--loop', '--speed', '1', '--balance', 'USDT=10000,BTC=0.5,ETH=5'],
    credentials,
  );
  proxy = await FaultProxy.start(sim.url!, 1_500);
});

afterAll(async () => {
  if (daemon && !daemon.exit) await daemon.stop('SIGKILL');
  await proxy?.close();
  await sim?.stop();
});

describe('fault injection between the daemon and the simulated exchange (both real processes)', () => {
  it('rides out every fault class, resumes promptly, logs each incident once and loses nothing', async () => {
    mkdirSync(join(dir, 'config'));
    writeFileSync(join(dir, 'config', 'churn.json'), churnFile('churn', SYMBOLS));
    const db = join(dir, 'bot.db');
    daemon = new DaemonProcess(chaosEnv(dir, proxy.url, credentials, PAUSE_MS));
    const d = daemon;
    // Against the standalone simulator replaying a recording, fills are recorded (its records carry wall time).
    await waitFor('fills recorded against `bot sim` replaying a recording', () => fillKeys(db).length >= 3, {
      daemon: d,
    });

    const figures: string[] = [];
    for (const fault of FAULTS) {
      const mark = d.lines.length;
      await proxy.set(fault);
      await sleep(PHASE_MS);
      await proxy.set(undefined);
      let ended = Date.now();
      if (fault === '401') {
        // An authentication failure halts trading until the operator clears it: nothing goes out meanwhile.
        await sleep(1_500);
        expect(proxy.creates.filter((t) => t > ended)).toEqual([]);
        ended = Date.now();
        d.child.kill('SIGUSR2');
      }
      const resumed = await waitFor(
        `orders to resume after the ${fault} phase`,
        () => proxy.creates.find((t) => t > ended),
        { daemon: d },
      );
      await sleep(500);
      const warnings = d.lines.slice(mark).filter((l) => (levelOf(l) ?? 0) >= 40);
      figures.push(
        `${fault.padEnd(12)} ${fault === 'outage' ? 'connections refused' : `injected ${String(proxy.injected.get(fault) ?? 0).padStart(3)} answers`}, ` +
          `orders resumed ${((resumed - ended) / 1000).toFixed(1)} s after it ended, ${warnings.length} warning lines`,
      );
      // One clear line per incident, not one per retry: a handful, whatever the number of failed requests.
      expect(warnings.length, warnings.join('\n')).toBeLessThanOrEqual(12);
    }

    await waitFor(
      'every journal row resolved',
      () => journal(db).every((r) => r.status !== 'PENDING' && r.status !== 'UNKNOWN'),
      { daemon: d },
    );
    expect(await d.stop('SIGTERM')).toEqual({ code: 0, signal: null });

    const exchange = sim.client(credentials);
    const audit = await auditAgainstExchange(db, exchange, { symbols: SYMBOLS, startBalances: BALANCES });
    await exchange.close();
    expect(audit.problems).toEqual([]);
    expect(audit.fills).toBeGreaterThan(10);
    for (const symbol of SYMBOLS) expect(audit.pairs.get(symbol)?.fills, symbol).toBeGreaterThan(0);
    expect(proxy.accountReads.orders, 'order history read for the account').toBeGreaterThan(0);
    expect(proxy.accountReads.trades, 'trade history read for the account').toBeGreaterThan(0);

    const leaks = findSecrets(
      [{ name: 'daemon output', text: d.lines.join('\n') }, ...runFiles(dir)],
      [credentials.apiSecret, API_TOKEN],
      proxy.signatures,
    );
    expect(leaks).toEqual([]);
    console.log(
      [
        `fault injection: ${FAULTS.length} phases of ${PHASE_MS} ms, breaker pause and reconcile window ${PAUSE_MS} ms`,
        ...figures,
        `audit: ${audit.orders} exchange orders, ${audit.trades} trades, ${audit.fills} fills (${pairCounts(audit)}): no problem`,
        `history read for the account (no symbol): ${proxy.accountReads.orders} of orders, ${proxy.accountReads.trades} of trades`,
        `secrets scan: ${proxy.signatures.size} signatures, the secret and the API token: none found in ` +
          `${d.lines.length} output lines and ${runFiles(dir).length} files`,
      ].join('\n'),
    );
  }, 300_000);
});
