/** LOG_FORMAT overrides the terminal guess: the daemon's output is a pipe here, JSON lines unless told pretty. */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DaemonProcess, daemonEnv } from '../e2e/daemon-process.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('log-format');
const emptyConfig = join(dir, 'config');
mkdirSync(emptyConfig);

/** `bot run` on a folder with no strategy file: it stops at once, logging why (exit 1). */
async function refusedRun(vars: Record<string, string>): Promise<string[]> {
  const run = new DaemonProcess(daemonEnv({ CONFIG_DIR: emptyConfig, DB_PATH: join(dir, 'bot.db'), ...vars }));
  expect((await run.exited).code).toBe(1);
  return run.lines.filter((l) => l.trim() !== '');
}

describe('LOG_FORMAT', () => {
  it('json (and unset, off a terminal): one JSON object a line', async () => {
    for (const vars of [{}, { LOG_FORMAT: 'json' }] as Record<string, string>[]) {
      const lines = await refusedRun(vars);
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expect(() => JSON.parse(line) as unknown).not.toThrow();
      expect(lines.join('\n')).toContain('strategy file, found none');
    }
  });

  it('pretty: human-readable lines although the output is not a terminal', async () => {
    const lines = await refusedRun({ LOG_FORMAT: 'pretty' });
    const text = lines.join('\n');
    expect(text).toContain('strategy file, found none');
    expect(text).toMatch(/ERROR/);
    expect(lines.some((l) => l.startsWith('{'))).toBe(false);
  });

  it('anything else is refused, naming the variable', async () => {
    const lines = await refusedRun({ LOG_FORMAT: 'xml' });
    expect(lines.join('\n')).toContain('LOG_FORMAT: expected json or pretty');
  });
});
