/**
 * docs/strategies.md must not rot: its example strategy and config are copied out of the guide into a
 * scratch project, loaded by the real loaders, and run through the harness.
 */
import { readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadStrategyFiles } from '../../src/config/loader.js';
import type { Intent } from '../../src/strategy/api.js';
import { REPO, tempProject, type TempProject } from '../config/temp-project.js';
import { Harness } from './harness.js';

const guide = readFileSync(join(REPO, 'docs/strategies.md'), 'utf8');
const examples = new Map(
  [...guide.matchAll(/<!-- example: (\S+) -->\s*```\w+\n([\s\S]*?)\n```/g)].map((m) => [m[1]!, `${m[2]!}\n`]),
);

let project: TempProject;
beforeAll(() => {
  project = tempProject();
  // The example imports '../src/strategy/api.js', as a module in the project's strategies/ does.
  symlinkSync(join(REPO, 'src'), join(project.root, 'src'), 'dir');
  project.strategy('dip-buyer.ts', examples.get('strategies/dip-buyer.ts') ?? '');
  project.config('dip-buyer-btcusdt.json', examples.get('config/dip-buyer-btcusdt.json') ?? '');
});
afterAll(() => project.remove());

const summary = (intents: readonly Intent[]) =>
  intents.map((i) => (i.kind === 'LIMIT' ? `${i.side} ${i.price.toFixed()} ${i.quantity.toFixed()} ${i.tag}` : i.kind));

describe('the strategy guide', () => {
  it('holds the example strategy and its config', () => {
    expect([...examples.keys()]).toEqual(['strategies/dip-buyer.ts', 'config/dip-buyer-btcusdt.json']);
  });

  it('its example loads through the config and strategy loaders, and trades as the guide says', async () => {
    const [instance] = await loadStrategyFiles(project.configDir, { strategiesDir: project.strategiesDir });
    expect(instance?.config).toMatchObject({ name: 'dip-buyer-btcusdt', strategy: 'dip-buyer', symbol: 'BTCUSDT' });
    const h = new Harness(instance!.definition, { params: instance!.config.params });
    await h.start();
    // 1 % under the first price, then (once bought) 1 % over the entry, then nothing more.
    expect(summary(await h.walk(['23000', '22900'], 10_000))).toEqual(['BUY 22770 0.001 dip:buy']);
    expect(summary(await h.walk(['22760', '22800'], 10_000))).toEqual(['SELL 22997.7 0.001 dip:sell']);
    await h.walk(['23000'], 10_000);
    expect(h.position.realisedPnl.toFixed()).toBe('0.2277');
    expect(await h.walk(['23000', '22000', '23500'], 10_000)).toEqual([]);
    expect(h.rejected).toEqual([]);
    expect(h.logs.map((l) => l.msg)).toContain('dip buyer starting');
  });
});
