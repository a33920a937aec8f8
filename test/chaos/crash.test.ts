/**
 * Crash-restart: the daemon (a real process, MODE=live) trades on `bot sim` (a real process) and is killed
 * with SIGKILL over and over, at random moments and at each lifecycle step of an order (after its journal
 * row and before its request, after the exchange accepted it and before the answer is journaled, after a
 * fill is seen and before it is recorded, during reconciliation), each time restarted on the same database.
 * It trades two pairs from one strategy file, so the orders poll's shared reads of the account's order and
 * trade history (no symbol, each pair taking its records: issue 41) are killed too; the proxy counts them.
 * Then the audit, pair by pair: no untracked or duplicate order, no lost or doubled fill, balances exact, no
 * secret leaked.
 * CHAOS_KILLS sets the count (default 25; `npm run test:chaos -- --kills 1000` for a release).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CRASH_POINTS } from '../../src/ops/crash-points.js';
import { mulberry32 } from '../../src/sim/prng.js';
import { DaemonProcess, journal, waitFor } from '../e2e/daemon-process.js';
import { auditAgainstExchange, pairCounts } from './exchange-audit.js';
import { FaultProxy } from './fault-proxy.js';
import { API_TOKEN, chaosEnv, churnFile, sleep } from './run-files.js';
import { findSecrets, runFiles } from './secrets.js';
import { freshCredentials, SimProcess } from './sim-process.js';
import { tempDir } from '../support/temp-dir.js';

const KILLS = Number(process.env.CHAOS_KILLS ?? 25);
const SEED = Number(process.env.CHAOS_SEED ?? Date.now() % 1_000_000);
const SYMBOLS = ['BTCUSDT', 'ETHUSDT'];
const BALANCES = { USDT: '100000', BTC: '5', ETH: '50' };
const PAUSE_MS = 2_000;

const dir = tempDir('chaos-crash');
const credentials = freshCredentials();
let sim: SimProcess;
let proxy: FaultProxy;
const outputs: string[] = [];

beforeAll(async () => {
  const walk = `--random-walk --seed 7 --symbols ${SYMBOLS.join(',')} --start BTCUSDT=20000,ETHUSDT=1500 --balance USDT=100000,BTC=5,ETH=50`;
  sim = await SimProcess.start(walk.split(' '), credentials);
  // No faults: the proxy is there to see every signature the daemon sends (for the secrets scan) and every
  // history read without a symbol (the shared reads under test).
  proxy = await FaultProxy.start(sim.url!, 1_500);
});

afterAll(async () => {
  await proxy?.close();
  await sim?.stop();
});

type Plan = (typeof CRASH_POINTS)[number] | 'random';
/** A kill after the journal write leaves a PENDING row: the next start reconciles it, where the next kill lands. */
const CYCLE: readonly Plan[] = ['after-journal', 'during-reconcile', 'after-send', 'before-fill-record', 'random'];

describe('crash-restart with SIGKILL at random moments and at each lifecycle step', () => {
  it(
    `survives ${KILLS} kills without an untracked or duplicate order, or a lost or doubled fill`,
    async () => {
      mkdirSync(join(dir, 'config'));
      writeFileSync(join(dir, 'config', 'churn.json'), churnFile('churn', SYMBOLS));
      const db = join(dir, 'bot.db');
      const random = mulberry32(SEED);
      const counts = new Map<string, number>();
      const started = Date.now();
      for (let k = 0; k < KILLS; k++) {
        const plan = CYCLE[k % CYCLE.length]!;
        const at = plan === 'random' ? '' : `${plan}:${1 + Math.floor(random() * 2)}`;
        const extra: Record<string, string> = at ? { BOT_TEST_HOOKS: '1', BOT_CRASH_AT: at } : {};
        const daemon = new DaemonProcess(chaosEnv(dir, proxy.url, credentials, PAUSE_MS, extra));
        let how: string;
        if (plan === 'random') {
          await sleep(300 + random() * 3_500);
          await daemon.stop('SIGKILL');
          how = 'random moment';
        } else {
          // The daemon kills itself at the step; a step not reached in time (no fill yet, say) is a random kill.
          const deadline = sleep(10_000).then(() => undefined);
          const exit = await Promise.race([daemon.exited, deadline]);
          if (exit?.signal === 'SIGKILL') how = plan;
          else {
            expect(exit, daemon.lines.slice(-20).join('\n')).toBeUndefined();
            await daemon.stop('SIGKILL');
            how = `random moment (${plan} not reached)`;
          }
        }
        counts.set(how, (counts.get(how) ?? 0) + 1);
        outputs.push(...daemon.lines);
      }

      // The last run: reconciles whatever the kills left, trades on, and stops in order.
      const rowsBefore = journal(db).length;
      const last = new DaemonProcess(chaosEnv(dir, proxy.url, credentials, PAUSE_MS));
      await waitFor('trading to go on after the last restart', () => journal(db).length >= rowsBefore + 3, {
        daemon: last,
      });
      await waitFor(
        'every journal row resolved',
        () => journal(db).every((r) => r.status !== 'PENDING' && r.status !== 'UNKNOWN'),
        { daemon: last },
      );
      expect(await last.stop('SIGTERM')).toEqual({ code: 0, signal: null });
      outputs.push(...last.lines);

      const exchange = sim.client(credentials);
      const audit = await auditAgainstExchange(db, exchange, { symbols: SYMBOLS, startBalances: BALANCES });
      await exchange.close();
      expect(audit.problems).toEqual([]);
      for (const symbol of SYMBOLS) expect(audit.pairs.get(symbol)?.fills, symbol).toBeGreaterThan(0);
      expect(proxy.accountReads.orders, 'order history read for the account').toBeGreaterThan(0);
      expect(proxy.accountReads.trades, 'trade history read for the account').toBeGreaterThan(0);
      const leaks = findSecrets(
        [{ name: 'daemon output', text: outputs.join('\n') }, ...runFiles(dir)],
        [credentials.apiSecret, API_TOKEN],
        proxy.signatures,
      );
      expect(leaks).toEqual([]);
      const statuses = new Map<string, number>();
      for (const r of journal(db)) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      console.log(
        [
          `crash-restart: ${KILLS} SIGKILLs (seed ${SEED}) in ${((Date.now() - started) / 1000).toFixed(0)} s, then a clean run`,
          ...[...counts].map(([how, n]) => `  ${String(n).padStart(5)} at ${how}`),
          `audit: ${audit.orders} exchange orders, ${audit.trades} trades, ${audit.fills} fills (${pairCounts(audit)}), ` +
            `journal ${[...statuses].map(([s, n]) => `${s} ${n}`).join(', ')}: no problem`,
          `history read for the account (no symbol): ${proxy.accountReads.orders} of orders, ${proxy.accountReads.trades} of trades`,
          `secrets scan: ${proxy.signatures.size} signatures, the secret and the API token: none found`,
        ].join('\n'),
      );
    },
    600_000 + KILLS * 15_000,
  );
});
