import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitCommit, installation, versionLine } from '../../src/app/installation.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('installation');

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);

function project(name: string, files: Record<string, string>): string {
  const root = join(dir, name);
  for (const [path, text] of Object.entries({ 'package.json': '{"name":"spot-bot","version":"1.2.3"}', ...files })) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe('the installation', () => {
  it('reads the commit from .git without git: a loose ref, a packed one, a detached HEAD, a worktree', () => {
    expect(
      gitCommit(project('loose', { '.git/HEAD': 'ref: refs/heads/main\n', '.git/refs/heads/main': `${A}\n` })),
    ).toBe(A);
    expect(
      gitCommit(
        project('packed', {
          '.git/HEAD': 'ref: refs/heads/main\n',
          '.git/packed-refs': `# pack-refs\n${B} refs/heads/main\n`,
        }),
      ),
    ).toBe(B);
    expect(gitCommit(project('detached', { '.git/HEAD': `${C}\n` }))).toBe(C);
    const common = project('common', {
      '.git/refs/heads/topic': `${B}\n`,
      '.git/worktrees/wt/HEAD': 'ref: refs/heads/topic\n',
    });
    writeFileSync(join(common, '.git/worktrees/wt/commondir'), '../..\n');
    expect(gitCommit(project('worktree', { '.git': `gitdir: ${join(common, '.git/worktrees/wt')}\n` }))).toBe(B);
    expect(gitCommit(project('none', {}))).toBeUndefined();
  });

  it('prefers the revision the image build wrote, and says nothing of a commit it does not know', () => {
    const built = project('built', { 'build-info.json': `{"revision":"${C}"}`, '.git/HEAD': `${A}\n` });
    expect(versionLine(installation(built))).toBe(`spot-bot 1.2.3 (commit ${'c'.repeat(12)})`);
    const unknown = project('unknown', { 'build-info.json': '{}', '.git/HEAD': `${A}\n` });
    expect(versionLine(installation(unknown))).toBe('spot-bot 1.2.3');
  });
});
