/**
 * Who holds the journal, named so an operator can find it (issue 43): the pid and host name, and in a container
 * which one. In a container the pid is usually 1 and the host name may be the machine's (`--network host`, a
 * `hostname:` setting), so the container's own name or id is read from where the runtime leaves it: the pod's
 * name from the downward API (POD_NAME, POD_NAMESPACE: docs/kubernetes.md), podman's /run/.containerenv, the
 * container id in /proc/self/mountinfo (Docker and podman mount their hostname and resolv.conf files from the
 * container's own folder) or /proc/self/cgroup (cgroup v1, and v2's `docker-<id>.scope`). Outside a container
 * it is undefined.
 *
 * Only the mounts at this process's own /etc/hostname, /etc/hosts and /etc/resolv.conf say which container it is
 * in: a host that runs rootful podman containers lists each one's `overlay-containers/<id>/userdata/shm` in its
 * own mountinfo, and taking that for ours named a daemon on the host after whichever container ran at its start,
 * so its restart after a kill -9 (another "container") waited for the lease instead of taking over at once.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { LockHolder } from '../store/journal-lock.js';

/** What the container's name is read from (the files' contents; undefined when absent). */
export interface ContainerClues {
  env: Record<string, string | undefined>;
  containerenv?: string;
  mountinfo?: string;
  cgroup?: string;
}

const CONTAINER_ID = [
  /\/containers\/([0-9a-f]{64})\//, // Docker's /var/lib/docker/containers/<id>/hostname
  /\/overlay-containers\/([0-9a-f]{64})\//, // podman's storage/overlay-containers/<id>/userdata
  /(?:docker|libpod|crio|cri-containerd)-([0-9a-f]{64})\.scope/,
  /\/(?:docker|kubepods[^\n]*)\/([0-9a-f]{64})(?:\n|$)/,
];

/** The container (or pod) this process runs in, in words; undefined when none is found. */
export function containerFrom(clues: ContainerClues): string | undefined {
  const pod = clues.env.POD_NAME;
  if (pod !== undefined && pod !== '') {
    const ns = clues.env.POD_NAMESPACE;
    return `pod ${ns === undefined || ns === '' ? '' : `${ns}/`}${pod}`;
  }
  if (clues.containerenv !== undefined) {
    const field = (key: string) => new RegExp(`^${key}="([^"]*)"`, 'm').exec(clues.containerenv ?? '')?.[1];
    const name = field('name');
    const id = field('id')?.slice(0, 12);
    if (name !== undefined && name !== '') return `container ${name}${id === undefined ? '' : ` (${id})`}`;
    if (id !== undefined && id !== '') return `container ${id}`;
  }
  for (const text of [ownFileMounts(clues.mountinfo), clues.cgroup]) {
    if (text === undefined) continue;
    for (const re of CONTAINER_ID) {
      const id = re.exec(text)?.[1];
      if (id !== undefined) return `container ${id.slice(0, 12)}`;
    }
  }
  return undefined;
}

/** The container's files bind-mounted over this process's own: where the runtime says whose folder it is. */
const OWN_FILES = new Set(['/etc/hostname', '/etc/hosts', '/etc/resolv.conf']);

/** The lines of /proc/self/mountinfo mounted at OWN_FILES (the fifth field is the mount point). */
function ownFileMounts(mountinfo: string | undefined): string | undefined {
  if (mountinfo === undefined) return undefined;
  return mountinfo
    .split('\n')
    .filter((line) => OWN_FILES.has(line.split(' ')[4] ?? ''))
    .join('\n');
}

function readIfThere(path: string): string | undefined {
  try {
    // Small files; read once at start.
    return readFileSync(path, 'utf8').slice(0, 1_000_000);
  } catch {
    return undefined;
  }
}

/** This process as the journal's holder: pid, host, container or pod when in one, since now. */
export function lockHolder(env: Record<string, string | undefined> = process.env): LockHolder {
  const container = containerFrom({
    env,
    containerenv: readIfThere('/run/.containerenv'),
    mountinfo: readIfThere('/proc/self/mountinfo'),
    cgroup: readIfThere('/proc/self/cgroup'),
  });
  return {
    pid: process.pid,
    host: hostname(),
    ...(container === undefined ? {} : { container }),
    since: new Date().toISOString(),
  };
}
