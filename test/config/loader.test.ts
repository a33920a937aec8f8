import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadStrategyFiles } from '../../src/config/loader.js';
import { expandPairLists, PAIR_LIST_TEMPLATE } from '../../src/config/strategy-file.js';
import { ConfigError } from '../../src/errors.js';
import { GOOD_STRATEGY, REPO, tempProject, type TempProject } from './temp-project.js';

let project: TempProject;
const valid = { name: 'good-1', strategy: 'good', symbol: 'BTCUSDT', params: { levels: 4 } };

beforeAll(() => {
  project = tempProject();
  project.strategy('good.ts', GOOD_STRATEGY);
  project.strategy('noexport.ts', `export const notDefault = 1;\n`);
  project.strategy('shapeless.ts', `export default { name: 'shapeless', params: { levels: 3 }, onStart: 1 };\n`);
  project.strategy('boom.ts', `throw new Error('boom while loading');\n`);
  project.strategy(
    'badcandles.ts',
    `import { z } from 'zod';\nimport { ema } from '${REPO}/src/strategy/api.ts';\n` +
      `export default { name: 'badcandles', params: z.object({ n: z.number().default(0) }),\n` +
      `  candles: { '5m': 0, '2h': 10 }, indicators: (p) => ({ fast: ema('5m', p.n) }), onTick() {} };\n`,
  );
  project.strategy(
    'badexits.ts',
    `import { z } from 'zod';\nexport default { name: 'badexits', params: z.object({}), onTick() {},\n` +
      `  exits: { stopLossPct: -1, trail: 2, roi: { soon: 1 } }, protections: { cooldownMinutes: '5' } };\n`,
  );
  project.strategy(
    'badtypes.ts',
    `import { z } from 'zod';\nexport default { name: 'badtypes', params: z.object({}), orderTypes: ['LIMIT', 'ICEBERG'], onTick() {} };\n`,
  );
});
afterAll(() => project.remove());

/** The problems loadStrategyFiles reports, failing the test when it does not throw a ConfigError. */
async function problemsOf(source: string | string[]): Promise<readonly string[]> {
  try {
    await loadStrategyFiles(source, { strategiesDir: project.strategiesDir });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).code).toBe('E_CONFIG');
    return (err as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

describe('loadStrategyFiles', () => {
  it('loads a valid file: defaults applied, params parsed by the strategy schema', async () => {
    const file = project.config('valid.json', valid);
    const [instance, ...rest] = await loadStrategyFiles(file, { strategiesDir: project.strategiesDir });
    expect(rest).toEqual([]);
    expect(instance!.file).toBe(file);
    expect(instance!.config).toMatchObject({
      name: 'good-1',
      strategy: 'good',
      enabled: true,
      schedule: '*/5 * * * * *',
    });
    expect(instance!.definition.name).toBe('good');
    expect(instance!.params).toEqual({ levels: 4, spacingPct: 1 });
  });

  it('makes one instance per pair of a file of symbols, each named <name>/<SYMBOL> under the file as its group', async () => {
    const { symbol: _one, ...rest } = valid;
    const file = project.config('pairs.json', { ...rest, name: 'trend', symbols: ['ETHUSDT', 'BTCUSDT'] });
    const instances = await loadStrategyFiles(file, { strategiesDir: project.strategiesDir });
    expect(instances.map((i) => [i.file, i.config.name, i.config.symbol, i.config.group])).toEqual([
      [file, 'trend/ETHUSDT', 'ETHUSDT', 'trend'],
      [file, 'trend/BTCUSDT', 'BTCUSDT', 'trend'],
    ]);
    // Every pair runs the file's settings.
    for (const i of instances) {
      expect(i.config).toMatchObject({ strategy: 'good', schedule: '*/5 * * * * *', enabled: true });
      expect(i.params).toEqual({ levels: 4, spacingPct: 1 });
    }
    expect(instances[0]!.config).not.toHaveProperty('symbols');
  });

  it('wants symbol or symbols, once each pair, and says which it found', async () => {
    const { symbol: _one, ...rest } = valid;
    const neither = project.config('neither.json', { ...rest, name: 'n1' });
    const both = project.config('both.json', { ...valid, name: 'n2', symbols: ['ETHUSDT'] });
    const twice = project.config('twice.json', { ...rest, name: 'n3', symbols: ['ETHUSDT', 'ETHUSDT'] });
    const none = project.config('empty.json', { ...rest, name: 'n4', symbols: [] });
    const lower = project.config('lower.json', { ...rest, name: 'n5', symbols: ['BTCUSDT', 'ethusdt'] });
    expect(await problemsOf([neither, both, twice, none, lower])).toEqual([
      `${neither}: symbol: expected one of symbol (one pair), symbols (several) or pairlist (chosen from the market watch), found none`,
      `${both}: symbols: expected one of symbol (one pair), symbols (several) or pairlist (chosen from the market watch), found symbol and symbols`,
      `${twice}: symbols: expected each symbol once, found an array of 2`,
      `${none}: symbols: expected a list of length >= 1, found an array of 0`,
      `${lower}: symbols[1]: expected an exchange symbol such as "BTCUSDT", found "ethusdt"`,
    ]);
  });

  it('checks portfolio limits: with symbols only, a stake as an amount or a share of the free balance', async () => {
    const { symbol: _one, ...rest } = valid;
    const pairs = { ...rest, symbols: ['ETHUSDT', 'BTCUSDT'] };
    const good = project.config('portfolio.json', {
      ...pairs,
      name: 'p1',
      portfolio: { maxOpenTrades: 1, stakePerTrade: '25%', maxExposure: '500' },
    });
    const [first] = await loadStrategyFiles(good, { strategiesDir: project.strategiesDir });
    expect(first!.config.portfolio).toMatchObject({ maxOpenTrades: 1, stakePerTrade: { pctOfFree: 25 } });
    expect(first!.config.portfolio!.maxExposure!.toFixed()).toBe('500');
    const single = project.config('single.json', { ...valid, name: 'p2', portfolio: { maxOpenTrades: 1 } });
    const wrong = project.config('wrong.json', {
      ...pairs,
      name: 'p3',
      portfolio: { maxOpenTrades: 0, stakePerTrade: '150%', maxExposur: '1' },
    });
    expect([...(await problemsOf([single, wrong]))].sort()).toEqual(
      [
        `${single}: portfolio: expected only beside symbols or pairlist (limits across several pairs), found it beside symbol`,
        `${wrong}: portfolio.maxOpenTrades: expected a number > 0, found 0`,
        `${wrong}: portfolio.stakePerTrade: expected a quote amount ("100") or a share of the free balance ("25%", at most 100), found "150%"`,
        `${wrong}: portfolio.maxExposur: unknown key (did you mean maxExposure?)`,
      ].sort(),
    );
  });

  it('reads a pairlist: its defaults, a template until the pairs are known, and what is wrong with one', async () => {
    const { symbol: _one, ...rest } = valid;
    const good = project.config('listed.json', {
      ...rest,
      name: 'l1',
      pairlist: { quote: 'USDT', top: 20, exclude: ['BTCUSDT'] },
      portfolio: { maxOpenTrades: 3 },
    });
    const [template, ...more] = await loadStrategyFiles(good, { strategiesDir: project.strategiesDir });
    expect(more).toEqual([]);
    expect(template!.config).toMatchObject({
      name: 'l1',
      symbol: PAIR_LIST_TEMPLATE,
      group: 'l1',
      pairlist: { quote: 'USDT', top: 20, sortBy: 'quoteVolume', exclude: ['BTCUSDT'], refresh: '0 */30 * * * *' },
    });
    expect(
      expandPairLists([template!], ['ETHUSDT', 'BTCUSDT', 'ETHBTC', 'SOLUSDT']).map((i) => [
        i.config.name,
        i.config.symbol,
      ]),
    ).toEqual([
      ['l1/ETHUSDT', 'ETHUSDT'],
      ['l1/SOLUSDT', 'SOLUSDT'],
    ]);
    const wrong = project.config('listed-wrong.json', {
      ...rest,
      name: 'l2',
      pairlist: { quote: 'usdt', top: 0, sortBy: 'price', refresh: 'every hour', minQuoteVolum: 1 },
    });
    expect([...(await problemsOf([wrong]))].sort()).toEqual(
      [
        `${wrong}: pairlist.quote: expected an asset code such as "USDT", found "usdt"`,
        `${wrong}: pairlist.top: expected a number > 0, found 0`,
        `${wrong}: pairlist.sortBy: expected one of "quoteVolume", "change", "volatility", found "price"`,
        `${wrong}: pairlist.minQuoteVolum: unknown key (did you mean minQuoteVolume?)`,
        `${wrong}: pairlist.refresh: expected a cron expression ([second] minute hour day month weekday), found "every hour" (expected 5 or 6 fields but got 2)`,
      ].sort(),
    );
  });

  it('loads every *.json of a directory in name order and ignores other files', async () => {
    const dir = join(project.root, 'many');
    const { mkdirSync, writeFileSync } = await import('node:fs');
    mkdirSync(dir);
    writeFileSync(join(dir, 'b.json'), JSON.stringify({ ...valid, name: 'b' }));
    writeFileSync(join(dir, 'a.json'), JSON.stringify({ ...valid, name: 'a' }));
    writeFileSync(join(dir, 'notes.txt'), 'not a config');
    const instances = await loadStrategyFiles(dir, { strategiesDir: project.strategiesDir });
    expect(instances.map((i) => [i.file, i.config.name])).toEqual([
      [join(dir, 'a.json'), 'a'],
      [join(dir, 'b.json'), 'b'],
    ]);
  });

  it('reports every problem of a file at once, one line each with path, expected and found', async () => {
    const file = project.config('all-wrong.json', {
      name: 'all wrong',
      strategy: 'good',
      symbol: 'BTCUSDT',
      schedule: '*/5 * * *',
      enabled: 'yes',
      strategi: 'good',
      params: { spacingPtc: 0.3, levels: 'three' },
      risk: { maxPosition: '-1', maxOrderNotional: '1e', maxOpenOrders: 2.5 },
    });
    expect([...(await problemsOf(file))].sort()).toEqual(
      [
        `${file}: name: expected letters, digits, _ . - (at most 64), found "all wrong"`,
        `${file}: enabled: expected a boolean, found "yes"`,
        `${file}: strategi: unknown key (did you mean strategy?)`,
        `${file}: risk.maxPosition: expected a positive decimal, found "-1"`,
        `${file}: risk.maxOrderNotional: expected a positive decimal, found "1e"`,
        `${file}: risk.maxOpenOrders: expected an int, found 2.5`,
        `${file}: schedule: expected a cron expression ([second] minute hour day month weekday), found "*/5 * * *" (expected 5 or 6 fields but got 4)`,
        `${file}: params.spacingPtc: unknown key (did you mean spacingPct?)`,
        `${file}: params.levels: expected a number, found "three"`,
      ].sort(),
    );
  });

  it('applies a plain z.object params schema strictly: an unknown key is an error, not a default', async () => {
    const file = project.config('typo.json', { ...valid, params: { spacingPtc: 2 } });
    expect(await problemsOf(file)).toEqual([`${file}: params.spacingPtc: unknown key (did you mean spacingPct?)`]);
  });

  it('lists the allowed keys when no key is close', async () => {
    const file = project.config('far.json', { ...valid, params: { zzz: 1 } });
    expect(await problemsOf(file)).toEqual([`${file}: params.zzz: unknown key (allowed: spacingPct, levels)`]);
  });

  it('reports a missing field and a wrong top-level type', async () => {
    const missing = project.config('missing.json', { strategy: 'good', symbol: 'BTCUSDT' });
    const array = project.config('array.json', '[1, 2]\n');
    expect(await problemsOf([missing, array])).toEqual([
      `${missing}: name: expected a string, found nothing`,
      `${array}: (root): expected an object, found an array of 2`,
    ]);
  });

  it('rejects an instance name used twice across files, naming both files', async () => {
    const first = project.config('dup-1.json', { ...valid, name: 'twin' });
    const second = project.config('dup-2.json', { ...valid, name: 'twin', symbol: 'ETHUSDT' });
    expect(await problemsOf([first, second])).toEqual([
      `${second}: name: expected an instance name unique across strategy files, found "twin" (also in ${first})`,
    ]);
  });

  it('reports an unknown strategy module and still checks the rest of the file', async () => {
    const file = project.config('unknown.json', { ...valid, strategy: 'nope', symbol: 'btcusdt' });
    const problems = await problemsOf(file);
    expect(problems).toContain(`${file}: symbol: expected an exchange symbol such as "BTCUSDT", found "btcusdt"`);
    expect(problems).toContain(
      `${file}: strategy: ${project.strategiesDir}/: expected a strategy module nope.ts or nope.js, found none`,
    );
    expect(problems).toHaveLength(2);
  });

  it('reports a module without a valid default export, naming the module file and what is missing', async () => {
    const files = ['noexport', 'shapeless', 'boom', 'badtypes'].map((s) =>
      project.config(`module-${s}.json`, { ...valid, name: `m-${s}`, strategy: s, params: {} }),
    );
    const module = (name: string) => join(project.strategiesDir, `${name}.ts`);
    expect(await problemsOf(files)).toEqual([
      `${files[0]}: strategy: ${module('noexport')}: has no default export (expected \`export default defineStrategy({...})\`)`,
      `${files[1]}: strategy: ${module('shapeless')}: default export: params: expected a zod schema`,
      `${files[1]}: strategy: ${module('shapeless')}: default export: onTick: expected a function`,
      `${files[1]}: strategy: ${module('shapeless')}: default export: onStart: expected a function when present`,
      `${files[2]}: strategy: ${module('boom')}: cannot be loaded: boom while loading`,
      `${files[3]}: strategy: ${module('badtypes')}: default export: orderTypes: expected a non-empty list of distinct LIMIT, MARKET, STOP_LIMIT, OCO, found ["LIMIT","ICEBERG"]`,
    ]);
  });

  it("reports a strategy's candles and indicators that make no sense for the file's params, naming the field", async () => {
    const file = project.config('candles.json', { ...valid, name: 'c', strategy: 'badcandles', params: {} });
    expect(await problemsOf(file)).toEqual([
      `${file}: strategy badcandles: candles.5m: expected a whole number from 1 to 100000, found 0`,
      `${file}: strategy badcandles: candles: expected a timeframe of 1m, 5m, 15m, 1h, 4h, 1d, found '2h'`,
      `${file}: strategy badcandles: indicators: threw ema period: expected a positive integer, found 0`,
    ]);
  });

  it('reports declared exits and protections that make no sense, naming the key', async () => {
    const file = project.config('exits.json', { ...valid, name: 'e', strategy: 'badexits', params: {} });
    expect(await problemsOf(file)).toEqual([
      `${file}: strategy badexits: exits.stopLossPct: expected a number > 0, found -1`,
      `${file}: strategy badexits: exits.roi: expected minutes held (whole numbers) -> minimum profit % ({ "0": 4, "60": 2 }), found the key "soon"`,
      `${file}: strategy badexits: exits.trail: unknown key (allowed: stopLossPct, stopLimitPct, trailingStopPct, trailingActivationPct, roi)`,
      `${file}: strategy badexits: protections.cooldownMinutes: expected a number, found "5"`,
    ]);
  });

  it('takes exits and protections from the strategy file, naming the file and the field of each problem', async () => {
    const ok = project.config('declared.json', {
      ...valid,
      name: 'declared',
      exits: { stopLossPct: 2, roi: { '0': 3 } },
      protections: { losingTrades: { count: 3, windowMinutes: 1440, pauseMinutes: 720 } },
    });
    const [instance] = await loadStrategyFiles(ok, { strategiesDir: project.strategiesDir });
    expect(instance!.config.exits).toEqual({ stopLossPct: 2, roi: { '0': 3 } });
    expect(instance!.config.protections?.losingTrades).toEqual({ count: 3, windowMinutes: 1440, pauseMinutes: 720 });
    const bad = project.config('declared-bad.json', {
      ...valid,
      name: 'declared-bad',
      exits: { stopLossPct: 150, stopLosPct: 2 },
      protections: { losingTrades: { count: 0, windowMinutes: 60 }, maxDrawdown: { pct: '10', pauseMinutes: 60 } },
    });
    expect(await problemsOf(bad)).toEqual([
      `${bad}: exits.stopLossPct: expected a number < 100, found 150`,
      `${bad}: exits.stopLosPct: unknown key (did you mean stopLossPct?)`,
      `${bad}: protections.losingTrades.count: expected a number > 0, found 0`,
      `${bad}: protections.losingTrades.pauseMinutes: expected a number, found nothing`,
      `${bad}: protections.maxDrawdown.pct: expected a number, found "10"`,
    ]);
  });

  it('validates the shipped config/ema-trend-btcusdt.json against the real ema-trend strategy', async () => {
    const [instance] = await loadStrategyFiles(join(REPO, 'config/ema-trend-btcusdt.json'));
    expect(instance!.params).toMatchObject({ timeframe: '1h', fast: 12, slow: 26 });
  });

  it('reports invalid JSON with line and column', async () => {
    const file = project.config('syntax.json', '{\n  "name": "x",\n  "strategy": "good"\n  "symbol": "BTCUSDT"\n}\n');
    const trailing = project.config('trailing.json', '{\n  "name": "x",\n}\n');
    const cut = project.config('cut.json', '{\n  "name": "x",\n  "params": {"a": [1, 2');
    expect(await problemsOf([file, trailing, cut])).toEqual([
      `${file}: line 4, column 3: expected ',' or '}' after the property value, found '"symbol": "BTCUS…'`,
      `${trailing}: line 3, column 1: expected a property name in double quotes, found '}'`,
      `${cut}: line 3, column 24: expected ',' or ']' after the array element, found the end of the file`,
    ]);
  });

  it('reports a missing path and a directory without strategy files', async () => {
    const { mkdirSync } = await import('node:fs');
    const empty = join(project.root, 'empty');
    mkdirSync(empty);
    const missing = join(project.root, 'absent.json');
    expect(await problemsOf([missing, empty])).toEqual([
      `${missing}: expected a strategy file or a directory of them, found none (ENOENT)`,
      `${empty}: expected at least one *.json strategy file, found none`,
    ]);
  });

  it('validates the shipped config/grid-btcusdt.json against the real grid strategy', async () => {
    const [instance] = await loadStrategyFiles(join(REPO, 'config/grid-btcusdt.json'));
    expect(instance!.config).toMatchObject({
      name: 'grid-btcusdt',
      strategy: 'grid',
      symbol: 'BTCUSDT',
      enabled: true,
    });
    expect(instance!.definition.orderTypes).toEqual(['LIMIT']);
    expect(instance!.config.risk.maxOpenOrders).toBe(12);
  });
});
