/**
 * What a sweep (and a hyperopt's space) may vary: `exits.*` (each ROI row too) and `protections.*` beside
 * `params.*` and `risk.*`; a key the strategy file does not know is refused before any data is read.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { configInput, instancesOf, readConfigs } from '../../src/backtest/strategy-configs.js';
import { tempProject } from '../config/temp-project.js';
import { bot, userStrategy } from './fixtures.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('sweep-keys');
const project = tempProject();
afterAll(() => {
  project.remove();
});

/** A strategy that declares a ROI table and a cooldown of its own. */
const DECLARING = `
import { z } from 'zod';
export default {
  name: 'declaring',
  params: z.object({ size: z.number().default(1) }),
  exits: { stopLossPct: 5, roi: { "0": 4, "120": 1 } },
  protections: { cooldownMinutes: 10 },
  onTick() {},
};
`;

it('sets exits, each ROI row over the strategy’s own table, and protections', async () => {
  const file = userStrategy(project, 'declaring', DECLARING, { size: 1 });
  const { sources } = await readConfigs([file], project.strategiesDir);
  const overrides = {
    'exits.stopLossPct': 2,
    'exits.roi.60': 2.5,
    'protections.cooldownMinutes': 30,
    'protections.losingTrades.count': 3,
    'protections.losingTrades.windowMinutes': 60,
    'protections.losingTrades.pauseMinutes': 120,
  };
  const [instance] = await instancesOf(sources[0]!, overrides);
  expect(instance!.config.exits).toEqual({ stopLossPct: 2, roi: { '0': 4, '60': 2.5, '120': 1 } });
  expect(instance!.config.protections).toEqual({
    cooldownMinutes: 30,
    losingTrades: { count: 3, windowMinutes: 60, pauseMinutes: 120 },
  });
  // The file as run, in a run's summary, says the same.
  expect(configInput(sources[0]!, [instance!], overrides).config).toMatchObject({
    exits: { stopLossPct: 2, roi: { '0': 4, '60': 2.5, '120': 1 } },
  });
  await expect(instancesOf(sources[0]!, { 'exits.stopLoss': 2 })).rejects.toThrow(/exits\.stopLoss: unknown key/);
  await expect(instancesOf(sources[0]!, { 'exits.stopLossPct': 120 })).rejects.toThrow(
    /exits\.stopLossPct: expected a number < 100/,
  );
});

it('refuses a sweep key the file does not know before any data is read, naming it', async () => {
  const file = userStrategy(project, 'declaring', DECLARING, { size: 1 });
  const out = join(dir, 'unknown');
  // The data does not exist: a refusal about the key proves nothing was read.
  const missing = join(dir, 'no-such-recording.jsonl');
  for (const [key, named] of [
    ['exits.stopLoss=1,2', 'exits.stopLoss: unknown key'],
    ['protections.cooldown=5,10', 'protections.cooldown: unknown key'],
    ['nope=1,2', 'params.nope: unknown key'],
  ]) {
    const r = await bot([
      '--config',
      file,
      '--strategies',
      project.strategiesDir,
      '--data',
      missing,
      '--sweep',
      key!,
      '--out',
      out,
    ]);
    expect(r.code).toBe(1);
    expect(r.err.join('\n')).toContain(named);
    expect(r.err.join('\n')).not.toMatch(/no-such-recording/);
  }
  expect(existsSync(out)).toBe(false);
});
