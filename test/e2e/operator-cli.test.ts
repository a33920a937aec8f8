/**
 * The operator's commands from a shell against a running paper daemon (a real process, its control API behind
 * a token): `bot exit`, `resume`, `force-entry` (at market, its declared stop-loss then held on the exchange
 * as for the strategy's own entry; refused by stop-buy and without an amount), `pause`, `kill-switch`,
 * `reload` and `cancel`, each answering one line and an exit code. One is a real `bot` process reading the
 * address and the token from API_PORT and API_TOKEN as `docker exec` gives them; the others run in process with
 * --url and --token-file. A wrong token, a daemon that is not there and a bad argument are named.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { OPERATOR_COMMANDS } from '../../src/cli/operator-commands.js';
import { operatorModule } from '../../src/cli/operator-commands.js';
import { capture } from '../support/command-output.js';
import { freePort } from '../support/free-port.js';
import { tempDir } from '../support/temp-dir.js';
import {
  DaemonProcess,
  daemonEnv,
  heldStopOnPaper,
  journal,
  lockstepPaperEnv,
  reenterFile,
  ROOT,
  waitFor,
} from './daemon-process.js';

const TOKEN = 'e2e-operator-cli-token-7f3a';

/** `bot NAME ARGS` as a real process with `env`: its exit code and output. */
function botProcess(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { cwd: ROOT, env });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => resolve({ code, out }));
  });
}

describe('operator commands from the CLI against a running daemon', () => {
  it('exit, resume, force-entry through the brakes with the declared stop attached, pause, kill switch, reload, cancel', async () => {
    const dir = tempDir('e2e-operator-cli');
    const port = await freePort();
    const env = await lockstepPaperEnv(
      dir,
      { 'x.json': reenterFile({ entries: 1, exits: { stopLossPct: 2 } }) },
      { period: 17, count: 3_000, amplitudePct: 0.5 },
      { API_PORT: String(port), API_TOKEN: TOKEN, RECONCILE_WINDOW_MS: '2000' },
    );
    const db = join(dir, 'bot.db');
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, `${TOKEN}\n`);
    const flags = ['--url', `http://127.0.0.1:${port}`, '--token-file', tokenFile];
    const bot = (name: keyof typeof OPERATOR_COMMANDS, args: string[] = []) =>
      capture(operatorModule(name).run, [...args, ...flags]);
    const tagged = (tag: string) => journal(db).filter((r) => r.tag === tag);

    const daemon = new DaemonProcess(env);
    try {
      await waitFor('the entry filled and its stop held', () => heldStopOnPaper(db)?.status === 'NEW', { daemon });
      await waitFor('the control API', () => daemon.messages(/control API and dashboard on/).length > 0, { daemon });

      // The exit, as `docker exec <container> bot exit x` runs it: the address and token from the environment.
      const shell = await botProcess(
        ['exit', 'x'],
        daemonEnv({ API_PORT: String(port), API_TOKEN: TOKEN, DB_PATH: db }),
      );
      expect(shell.out).toMatch(/^exit x: sent MARKET SELL 0\.00\d+ BTCUSDT as x-\d+/m);
      expect(shell.code).toBe(0);
      await waitFor('the exit filled', () => tagged('exit')[0]?.status === 'FILLED', { daemon });

      expect(await bot('resume', ['x'])).toMatchObject({ code: 0, out: ['resume x: resumed'] });
      expect(await bot('resume', ['x'])).toMatchObject({ code: 0, out: ['resume x: already running'] });

      // Force entry: refused without an amount (reenter declares no params.quoteAmount) and by stop-buy.
      const noAmount = await bot('force-entry', ['x']);
      expect(noAmount.code).toBe(1);
      expect(noAmount.err.join('\n')).toMatch(/E_ENTRY_REFUSED: .*quoteAmount/);
      expect(await bot('stop-buy', ['on'])).toMatchObject({ code: 0, out: ['stop-buy: on'] });
      const stopped = await bot('force-entry', ['x', '--quote-amount', '25']);
      expect(stopped.code).toBe(1);
      expect(stopped.err.join('\n')).toMatch(/E_ENTRY_REFUSED: force entry of x refused: stop-buy is on/);
      expect(tagged('force-entry')).toEqual([]);
      expect(await bot('stop-buy', ['off'])).toMatchObject({ code: 0, out: ['stop-buy: off'] });

      // Through, at market: the declared stop-loss is held on the exchange for it as for the strategy's entry.
      const entered = await bot('force-entry', ['x', '--quote-amount', '25']);
      expect(entered.out.join('\n')).toMatch(/^force-entry x: sent MARKET BUY for 25(\.0+)? BTCUSDT as x-\d+/);
      expect(entered.code).toBe(0);
      await waitFor('the forced entry filled', () => tagged('force-entry')[0]?.status === 'FILLED', { daemon });
      await waitFor(
        'a second stop held, for the forced entry',
        () =>
          tagged('exit:stop-loss').filter((r) => r.status === 'OPEN' || r.status === 'NEW').length === 1 &&
          tagged('exit:stop-loss').length === 2,
        { daemon },
      );

      // A limit far below rests: cancelled by its id, then again (already cancelled).
      const limit = await bot('force-entry', ['x', '--price', '1000', '--quote-amount', '25']);
      expect(limit.out.join('\n')).toMatch(/^force-entry x: sent LIMIT BUY 0\.025 at 1000(\.0+)? BTCUSDT as (x-\d+)/);
      const id = /as (x-\d+)/.exec(limit.out.join('\n'))![1]!;
      expect(await bot('cancel', [id])).toMatchObject({
        code: 0,
        out: [expect.stringMatching(`^cancel ${id}: cancelled`)],
      });
      expect(await bot('cancel', [id])).toMatchObject({ code: 0, out: [`cancel ${id}: already CANCELED`] });

      expect(await bot('pause', ['x'])).toMatchObject({ code: 0, out: ['pause x: paused'] });
      const paused = await bot('force-entry', ['x', '--quote-amount', '25']);
      expect(paused.err.join('\n')).toMatch(/refused: instance x is paused, not running/);
      expect(await bot('kill-switch', ['on'])).toMatchObject({ code: 0, out: ['kill-switch: on'] });
      expect(await bot('kill-switch', ['off'])).toMatchObject({ code: 0, out: ['kill-switch: off'] });
      expect(await bot('reload')).toMatchObject({ code: 0, out: ['reload: nothing changed'] });

      // Refusals named: an unknown instance, a wrong token, a bad argument, no daemon at the address.
      const nobody = await bot('pause', ['nobody']);
      expect(nobody).toMatchObject({ code: 1 });
      expect(nobody.err[0]).toMatch(/^pause nobody: E_UNKNOWN_INSTANCE: /);
      writeFileSync(tokenFile, 'not-the-token-of-this-daemon');
      const wrong = await bot('reload');
      expect(wrong.code).toBe(1);
      expect(wrong.err[0]).toMatch(/^reload: E_UNAUTHORIZED: .*--token-file/);
      expect(wrong.err.join('\n')).not.toContain('not-the-token');
      const usage = await capture(operatorModule('kill-switch').run, ['maybe']);
      expect(usage.code).toBe(2);
      expect(usage.err[0]).toMatch(/^kill-switch: expected on or off, got 'maybe'/);
      const away = await capture(operatorModule('reload').run, ['--url', `http://127.0.0.1:${await freePort()}`]);
      expect(away.code).toBe(1);
      expect(away.err[0]).toMatch(/^reload: no daemon answers at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)/);
    } finally {
      expect(await daemon.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    }
  }, 150_000);
});
