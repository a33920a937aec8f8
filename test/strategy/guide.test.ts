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
import { Harness } from '../../src/testing/strategy-harness.js';

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
  project.strategy('sma-cross.ts', examples.get('strategies/sma-cross.ts') ?? '');
  project.config('sma-cross-btcusdt.json', examples.get('config/sma-cross-btcusdt.json') ?? '');
});
afterAll(() => project.remove());

const summary = (intents: readonly Intent[]) =>
  intents.map((i) => (i.kind === 'LIMIT' ? `${i.side} ${i.price.toFixed()} ${i.quantity.toFixed()} ${i.tag}` : i.kind));

describe('the strategy guide', () => {
  it('holds the example strategy and its config', () => {
    expect([...examples.keys()]).toEqual([
      'strategies/dip-buyer.ts',
      'config/dip-buyer-btcusdt.json',
      'strategies/sma-cross.ts',
      'config/sma-cross-btcusdt.json',
    ]);
  });

  it('its example loads through the config and strategy loaders, and trades as the guide says', async () => {
    const [instance] = await loadStrategyFiles(join(project.configDir, 'dip-buyer-btcusdt.json'), {
      strategiesDir: project.strategiesDir,
    });
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

  it('its example sells what it can and rests, though the base fee of the buy leaves dust below the step', async () => {
    const [instance] = await loadStrategyFiles(join(project.configDir, 'dip-buyer-btcusdt.json'), {
      strategiesDir: project.strategiesDir,
    });
    const params = { ...(instance!.config.params as object), quantity: '0.0015' };
    const h = new Harness(instance!.definition, { params });
    await h.start();
    expect(summary(await h.walk(['23000', '22900'], 10_000))).toEqual(['BUY 22770 0.0015 dip:buy']);
    await h.tick('22760');
    // The simulated exchange's 0.1 % fee, in the base bought: 0.0014985 held, on a 0.000001 step.
    await h.fill('dip:buy', { fee: '0.0000015', feeAsset: 'BTC' });
    // 1 % over the entry, whose price carries the fee (22770 x 0.0015 / 0.0014985), rounded up to the tick.
    expect(summary(await h.tick('22800'))).toEqual(['SELL 23020.73 0.001498 dip:sell']);
    await h.tick('23100');
    await h.fill('dip:sell', { fee: '0.03448505', feeAsset: 'USDT' });
    expect(h.position.quantity.toFixed()).toBe('0.0000005');
    expect(await h.walk(['23000', '22000', '23500'], 10_000)).toEqual([]);
    expect(h.rejected).toEqual([]);
    expect(h.state).toMatchObject({ done: true });
  });

  it('its SMA crossover reads candles: it buys once the fast average of closed candles is above the slow one', async () => {
    const [instance] = await loadStrategyFiles(join(project.configDir, 'sma-cross-btcusdt.json'), {
      strategiesDir: project.strategiesDir,
    });
    const h = new Harness(instance!.definition, { params: instance!.config.params });
    const kinds = (intents: readonly Intent[]) =>
      intents.map((i) => (i.kind === 'CANCEL' ? 'CANCEL' : `${i.kind} ${i.side} ${i.tag}`));
    // One tick per five minutes: each closes the candle before. Four closed candles are needed.
    expect(kinds(await h.walk(['100', '99', '98', '97'], 300_000))).toEqual([]);
    // Closes 100 99 98 97: falling (fast 97.5 under slow 98.5), nothing.
    expect(kinds(await h.walk(['101'], 300_000))).toEqual([]);
    // Closes 99 98 97 101: fast 99 over slow 98.75.
    expect(kinds(await h.walk(['105'], 300_000))).toEqual(['MARKET BUY sma:buy']);
    expect(kinds(await h.walk(['106', '107'], 300_000))).toEqual([]);
    expect(kinds(await h.walk(['90', '80', '70'], 300_000))).toEqual(['MARKET SELL sma:sell']);
    expect(h.rejected).toEqual([]);
  });
});
