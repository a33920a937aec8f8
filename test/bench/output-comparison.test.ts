/**
 * bench:identical's comparison of two output folders (bench/output-comparison.ts): a run that differs only in the
 * recorded hashes of a source file that differs between the two checkouts is told apart from a real difference;
 * a changed number, a changed data hash or a recorded hash that is not the checkout's file stay differences.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compareOutputs, type Side } from '../../bench/output-comparison.js';
import { tempDir } from '../support/temp-dir.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const CONFIG = '{ "strategy": "grid" }\n';
const DATA = 'a'.repeat(64);

/** A checkout holding config/grid.json and strategies/grid.ts with this source. */
function checkout(dir: string, source: string): string {
  for (const [file, text] of [
    ['config/grid.json', CONFIG],
    ['strategies/grid.ts', source],
  ] as const) {
    mkdirSync(join(dir, file, '..'), { recursive: true });
    writeFileSync(join(dir, file), text);
  }
  return dir;
}

/** An output folder as `bot backtest` writes one: the marker, summary.json and the report's input lines. */
function outputs(dir: string, o: { module: string; data?: string; pnl?: string; inputs: string }): string {
  mkdirSync(dir);
  writeFileSync(join(dir, '.spot-bot-output.json'), JSON.stringify({ kind: 'run', inputs: o.inputs }));
  const summary = {
    inputs: {
      configs: [
        { file: 'config/grid.json', sha256: sha256(CONFIG), module: { file: 'strategies/grid.ts', sha256: o.module } },
      ],
      data: [{ path: '/data/BTCUSDT.jsonl.gz', sha256: o.data ?? DATA }],
    },
    metrics: { pnl: o.pnl ?? '12.5' },
  };
  writeFileSync(join(dir, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
  const lines = [`config config/grid.json (grid, sha256 ${sha256(CONFIG).slice(0, 12)}…)`];
  lines.push(`strategy strategies/grid.ts (sha256 ${o.module.slice(0, 12)}…)`);
  lines.push(`data /data/BTCUSDT.jsonl.gz (sha256 ${(o.data ?? DATA).slice(0, 12)}…)`);
  writeFileSync(join(dir, 'report.html'), `${lines.join('\n')}\n`);
  return dir;
}

describe('compareOutputs', () => {
  const setUp = () => {
    const dir = tempDir('output-comparison');
    const [old, changed] = ['export const grid = 1;\n', '// a comment\nexport const grid = 1;\n'];
    const here = checkout(join(dir, 'here'), changed);
    const there = checkout(join(dir, 'there'), old);
    return { dir, here, there, hereModule: sha256(changed), thereModule: sha256(old) };
  };

  it('finds nothing between identical folders', () => {
    const { dir, here } = setUp();
    const [a, b] = ['a', 'b'].map((n) => outputs(join(dir, n), { module: sha256(CONFIG), inputs: '0123456789' }));
    expect(compareOutputs({ out: a!, root: here }, { out: b!, root: here })).toEqual({
      sources: [],
      masked: [],
      differences: [],
    });
  });

  it("tells a changed source's hashes apart, the marker's inputs hash with them", () => {
    const { dir, here, there, hereModule, thereModule } = setUp();
    const a: Side = { out: outputs(join(dir, 'a'), { module: hereModule, inputs: '1111111111' }), root: here };
    const b: Side = { out: outputs(join(dir, 'b'), { module: thereModule, inputs: '2222222222' }), root: there };
    expect(compareOutputs(a, b)).toEqual({
      sources: [{ file: 'strategies/grid.ts', here: hereModule, there: thereModule }],
      masked: ['.spot-bot-output.json', 'report.html', 'summary.json'],
      differences: [],
    });
  });

  it('keeps a changed number a difference, with its own line, beside a changed source', () => {
    const { dir, here, there, hereModule, thereModule } = setUp();
    const a: Side = {
      out: outputs(join(dir, 'a'), { module: hereModule, inputs: '1111111111', pnl: '12.6' }),
      root: here,
    };
    const b: Side = { out: outputs(join(dir, 'b'), { module: thereModule, inputs: '2222222222' }), root: there };
    const { sources, masked, differences } = compareOutputs(a, b);
    expect(sources.map((s) => s.file)).toEqual(['strategies/grid.ts']);
    expect(masked).toEqual(['report.html']);
    // The marker is not put down to the source: summary.json differs in more than its hash.
    expect(differences.map((d) => d.split(':')[0])).toEqual(['.spot-bot-output.json', 'summary.json']);
    expect(differences[1]).toContain('"pnl": "12.6"');
  });

  it("keeps a data file's hash a difference", () => {
    const { dir, here, there, hereModule, thereModule } = setUp();
    const data = 'b'.repeat(64);
    const a: Side = { out: outputs(join(dir, 'a'), { module: hereModule, inputs: '1111111111', data }), root: here };
    const b: Side = { out: outputs(join(dir, 'b'), { module: thereModule, inputs: '2222222222' }), root: there };
    const { differences } = compareOutputs(a, b);
    expect(differences.map((d) => d.split(':')[0])).toEqual(['.spot-bot-output.json', 'report.html', 'summary.json']);
    expect(differences[2]).toContain(`"sha256": "${data}"`);
  });

  it("keeps a recorded hash that is not the checkout's file a difference", () => {
    const { dir, here, hereModule } = setUp();
    // The same checkout on both sides: its grid.ts did not change, whatever the outputs say.
    const a: Side = { out: outputs(join(dir, 'a'), { module: hereModule, inputs: '1111111111' }), root: here };
    const b: Side = { out: outputs(join(dir, 'b'), { module: 'c'.repeat(64), inputs: '2222222222' }), root: here };
    const { sources, differences } = compareOutputs(a, b);
    expect(sources).toEqual([]);
    expect(differences.map((d) => d.split(':')[0])).toEqual(['.spot-bot-output.json', 'report.html', 'summary.json']);
  });
});
