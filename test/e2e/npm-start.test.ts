/**
 * `npm start` as users run it under systemd, pm2 or a terminal: the signal goes to npm's own process. The bot
 * must run in npm's child itself (no shell or tsx process in between to swallow the signal), stop cleanly and
 * leave no process of the tree behind, with the journal closed (the events table ends with daemon-stopped):
 * on the signals npm forwards, on those it does not (SIGHUP, SIGKILL: npm dies, the bot notices its parent is
 * gone), and on SIGHUP to the bot itself.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  daemonEnv,
  npmStart,
  everyOrderFile,
  readDb,
  TEST_STRATEGIES,
  waitFor,
  writeSwingRecording,
} from './daemon-process.js';
import { whenExited } from '../support/until.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('e2e-npm-start');

interface Proc {
  pid: number;
  ppid: number;
  cmd: string;
}

/** Every process now running, from /proc (Linux). */
function processes(): Proc[] {
  const all: Proc[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // The command name in parentheses may hold spaces; the fields after it are fixed.
      const after = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (after[0] === 'Z') continue;
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ').trim();
      all.push({ pid: Number(name), ppid: Number(after[1]), cmd });
    } catch {
      // Gone between the listing and the read.
    }
  }
  return all;
}

/** `root` and everything below it. */
function tree(root: number): Proc[] {
  const all = processes();
  const found = all.filter((p) => p.pid === root);
  for (let i = 0; i < found.length; i++) found.push(...all.filter((p) => p.ppid === found[i]!.pid));
  return found;
}

const alive = (pid: number) => processes().some((p) => p.pid === pid);

let npm: ChildProcess | undefined;

interface StopCase {
  /** Which process gets the signal. */
  to: 'npm' | 'bot';
  signal: NodeJS.Signals;
  /** How npm ends. */
  npmExit: { code: number | null; signal: NodeJS.Signals | null };
  /** The reason the bot's stop records. */
  reason: string;
}

const cases: StopCase[] = [
  { to: 'npm', signal: 'SIGTERM', npmExit: { code: 0, signal: null }, reason: 'SIGTERM' },
  { to: 'npm', signal: 'SIGINT', npmExit: { code: 0, signal: null }, reason: 'SIGINT' },
  // npm forwards neither: it dies, and the bot, adopted by another parent, notices and stops in order.
  { to: 'npm', signal: 'SIGHUP', npmExit: { code: null, signal: 'SIGHUP' }, reason: 'parent process exited' },
  { to: 'npm', signal: 'SIGKILL', npmExit: { code: null, signal: 'SIGKILL' }, reason: 'parent process exited' },
  // A closed terminal sends SIGHUP to the whole foreground group: the bot stops in order on it.
  { to: 'bot', signal: 'SIGHUP', npmExit: { code: 0, signal: null }, reason: 'SIGHUP' },
];

describe.runIf(process.platform === 'linux')('npm start', () => {
  it.each(cases)(
    '$signal to the $to process stops the bot in order and leaves no process of the tree',
    async ({ to, signal, npmExit, reason }) => {
      const run = join(dir, `${to}-${signal}`);
      mkdirSync(join(run, 'config'), { recursive: true });
      writeFileSync(join(run, 'config', 'churn.json'), everyOrderFile('churn', { churn: 1000 }));
      const recording = join(run, 'swing.jsonl.gz');
      await writeSwingRecording(recording);
      const db = join(run, 'bot.db');
      const started = npmStart(
        daemonEnv({
          DB_PATH: db,
          CONFIG_DIR: join(run, 'config'),
          STRATEGIES_DIR: TEST_STRATEGIES,
          PAPER_DATA: recording,
          PAPER_LOCKSTEP: 'true',
          KILL_SWITCH_FILE: join(run, 'KILL'),
        }),
      );
      npm = started.npm;
      const { lines } = started;
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        npm!.once('exit', (code, sig) => resolve({ code, signal: sig })),
      );
      const npmPid = npm.pid!;
      await waitFor('the daemon to place orders', () => lines.some((l) => l.includes('"msg":"order placed"')), {
        giveUp: whenExited(npm, 'npm start'),
      });

      const before = tree(npmPid);
      // The bot is npm's child itself: no shell, no tsx CLI in between (bin/bot.js runs the build in its process).
      const bot = before.find((p) => p.ppid === npmPid);
      expect(bot?.cmd).toMatch(/node --max-semi-space-size=2 bin\/bot\.js run$/);
      expect(before.filter((p) => p.ppid === npmPid)).toHaveLength(1);

      process.kill(to === 'npm' ? npmPid : bot!.pid, signal);
      expect(await exited).toEqual(npmExit);
      await waitFor(`every process of the tree gone (${before.map((p) => p.cmd).join('; ')})`, () =>
        before.every((p) => !alive(p.pid)),
      );
      // The bot's last lines may reach this end of the pipe after the process is gone: wait for them.
      await waitFor('the last log line', () => lines.some((l) => l.includes('stopped: database closed')));
      expect(lines.join('\n')).toContain('every-order: onStop ran');
      const events = readDb(db, (d) =>
        d.prepare("SELECT kind, data FROM events WHERE kind LIKE 'daemon-%' ORDER BY id").all(),
      ) as { kind: string; data: string }[];
      expect(events.map((e) => e.kind)).toEqual(['daemon-started', 'daemon-stopped']);
      expect(JSON.parse(events[1]!.data)).toMatchObject({ reason });
    },
    90_000,
  );
});
