import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { envShape } from '../../src/app/env.js';
import { helpText } from '../../src/cli/flags.js';
import { commandSpecs, referencePages } from '../../src/cli/reference.js';
import { envDocs } from '../../src/config/env.js';
import { ROOT } from '../e2e/daemon-process.js';

describe('the generated references', () => {
  it('docs/cli.md and docs/configuration.md are what the specs and schemas make (npm run docs:reference)', async () => {
    for (const page of await referencePages()) {
      const onDisk = readFileSync(join(ROOT, page.path), 'utf8');
      expect(onDisk, `${page.path} is stale: run npm run docs:reference`).toBe(page.text);
    }
  });

  it('documents every variable of the schema', () => {
    const undocumented = Object.entries(envShape)
      .filter(([, schema]) => (envDocs.get(schema)?.description ?? '') === '')
      .map(([name]) => name);
    expect(undocumented).toEqual([]);
  });

  it('lists every variable and every flag on its page', async () => {
    const [cli, config] = await referencePages();
    for (const name of Object.keys(envShape)) expect(config!.text).toContain(`| \`${name}\` |`);
    for (const { specs } of await commandSpecs())
      for (const spec of specs) {
        expect(cli!.text).toContain(`## bot ${spec.name}\n`);
        for (const flag of Object.keys(spec.flags)) expect(cli!.text).toContain(`\`--${flag}`);
      }
  });
});

describe('--help', () => {
  afterEach(() => vi.restoreAllMocks());

  it("of every command prints its spec's help, the text docs/cli.md is made from", async () => {
    const commands = await commandSpecs();
    expect(commands.every((c) => c.specs.length > 0)).toBe(true);
    for (const { name, specs } of commands) {
      const { COMMANDS } = await import('../../src/cli/commands.js');
      const module = await COMMANDS[name]!.load();
      for (const spec of specs) {
        const printed: string[] = [];
        vi.spyOn(console, 'log').mockImplementation((text: string) => void printed.push(text));
        const sub = spec.name.split(' ').slice(1);
        expect(await module.run([...sub, '--help']), spec.name).toBe(0);
        vi.restoreAllMocks();
        expect(printed.join('\n'), spec.name).toBe(helpText(spec));
      }
    }
  });
});
