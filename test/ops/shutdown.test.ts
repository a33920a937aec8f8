import { EventEmitter } from 'node:events';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { currentParentPid, installShutdown, type ShutdownOptions } from '../../src/ops/shutdown.js';

function setUp(
  stop: (reason: string) => Promise<void>,
  timeoutMs = 5_000,
  watchParent?: ShutdownOptions['watchParent'],
) {
  const proc = new EventEmitter();
  const exits: number[] = [];
  const messages: string[] = [];
  const logger = pino(
    { level: 'debug' },
    { write: (s: string) => void messages.push((JSON.parse(s) as { msg: string }).msg) },
  );
  let exited: () => void = () => undefined;
  const exitedOnce = new Promise<void>((resolve) => (exited = resolve));
  const shutdown = installShutdown({
    logger,
    stop,
    timeoutMs,
    watchParent,
    process: proc,
    exit: (code) => {
      exits.push(code);
      exited();
    },
  });
  return { proc, exits, messages, shutdown, exitedOnce };
}

describe('installShutdown', () => {
  it('SIGTERM runs the orderly stop once, aborts the start-up signal, and exits 0', async () => {
    const reasons: string[] = [];
    const t = setUp((reason) => {
      reasons.push(reason);
      return Promise.resolve();
    });
    t.proc.emit('SIGTERM');
    expect(t.shutdown.signal.aborted).toBe(true);
    await t.exitedOnce;
    expect(reasons).toEqual(['SIGTERM']);
    expect(t.exits).toEqual([0]);
    t.shutdown.dispose();
    expect(t.proc.listenerCount('SIGTERM')).toBe(0);
  });

  it('SIGHUP stops in order with exit 0 too (a closed terminal, a supervisor that sends it)', async () => {
    const reasons: string[] = [];
    const t = setUp((reason) => {
      reasons.push(reason);
      return Promise.resolve();
    });
    t.proc.emit('SIGHUP');
    await t.exitedOnce;
    expect(reasons).toEqual(['SIGHUP']);
    expect(t.exits).toEqual([0]);
    t.shutdown.dispose();
  });

  it('stops in order once its parent is gone (adopted: another parent pid), and only then', async () => {
    let parent = 4242;
    const reasons: string[] = [];
    const t = setUp(
      (reason) => {
        reasons.push(reason);
        return Promise.resolve();
      },
      5_000,
      { intervalMs: 5, parentPid: () => parent },
    );
    await new Promise((r) => setTimeout(r, 30));
    expect(reasons).toEqual([]);
    parent = 1;
    await t.exitedOnce;
    expect(reasons).toEqual(['parent process exited']);
    expect(t.exits).toEqual([0]);
    expect(t.messages).toContain('the parent process (pid 4242) is gone: stopping');
    t.shutdown.dispose();
  });

  it('does not watch a parent that is init (PID 1 in a container, systemd)', async () => {
    let reads = 0;
    const t = setUp(() => Promise.resolve(), 5_000, {
      intervalMs: 5,
      parentPid: () => (reads++ === 0 ? 1 : 777),
    });
    await new Promise((r) => setTimeout(r, 30));
    expect(t.exits).toEqual([]);
    expect(reads).toBe(1);
    t.shutdown.dispose();
  });

  it.runIf(process.platform === 'linux')('reads the parent pid the kernel knows now', () => {
    expect(currentParentPid()).toBe(process.ppid);
    const child = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        '-e',
        "import('./src/ops/shutdown.ts').then((m) => console.log(m.currentParentPid(), process.ppid))",
      ],
      { encoding: 'utf8' },
    );
    const [now, atStart] = child.stdout.trim().split(' ').map(Number);
    expect(now).toBe(atStart);
  });

  it('a second signal exits at once, without waiting for the stop in progress', async () => {
    let finish: () => void = () => undefined;
    const t = setUp(() => new Promise<void>((resolve) => (finish = resolve)));
    t.proc.emit('SIGINT');
    t.proc.emit('SIGINT');
    expect(t.exits).toEqual([130]);
    expect(t.messages.join('\n')).toContain('SIGINT again: exiting now');
    finish();
    await new Promise((r) => setTimeout(r, 10));
    t.shutdown.dispose();
  });

  it('an uncaught exception or unhandled rejection is logged and stops the bot in order with exit 1', async () => {
    let stops = 0;
    const t = setUp(() => {
      stops++;
      return Promise.resolve();
    });
    t.proc.emit('unhandledRejection', new Error('lost promise'));
    t.proc.emit('uncaughtException', new Error('second problem'));
    await t.exitedOnce;
    expect(stops).toBe(1);
    expect(t.exits).toEqual([1]);
    expect(t.messages).toContain('unhandled promise rejection: stopping the bot');
    t.shutdown.dispose();
  });

  it('a stop that fails or hangs still ends the process, with exit 1', async () => {
    const failing = setUp(() => Promise.reject(new Error('close failed')));
    failing.proc.emit('SIGTERM');
    await failing.exitedOnce;
    expect(failing.exits).toEqual([1]);
    failing.shutdown.dispose();

    const hanging = setUp(() => new Promise<void>(() => undefined), 50);
    hanging.proc.emit('SIGTERM');
    await hanging.exitedOnce;
    expect(hanging.exits).toEqual([1]);
    expect(hanging.messages.join('\n')).toContain('not clean within 50 ms');
    hanging.shutdown.dispose();
  });
});
