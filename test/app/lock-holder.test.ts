/**
 * The lock holder's container (issue 43): a pod's name from the downward API, podman's /run/.containerenv, a
 * Docker or podman container id from /proc/self/mountinfo or /proc/self/cgroup, and none outside a container
 * (this machine's own files included).
 */
import { describe, expect, it } from 'vitest';
import { containerFrom, lockHolder } from '../../src/app/lock-holder.js';

const ID = '3f2a9c1b7d0e5a6b8c9d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d';

describe('the lock holder in a container', () => {
  it('is named from what each runtime leaves', () => {
    expect(containerFrom({ env: { POD_NAME: 'bot-0', POD_NAMESPACE: 'trading' } })).toBe('pod trading/bot-0');
    expect(containerFrom({ env: { POD_NAME: 'bot-0' } })).toBe('pod bot-0');
    expect(containerFrom({ env: {}, containerenv: `engine="podman-5.4.2"\nname="spot-bot"\nid="${ID}"\n` })).toBe(
      'container spot-bot (3f2a9c1b7d0e)',
    );
    const dockerMounts = `1203 1180 259:1 /var/lib/docker/containers/${ID}/hostname /etc/hostname rw,relatime - ext4 /dev/root rw\n`;
    expect(containerFrom({ env: {}, mountinfo: dockerMounts })).toBe('container 3f2a9c1b7d0e');
    const podmanMounts = `88 70 0:44 /containers/storage/overlay-containers/${ID}/userdata/hostname /etc/hostname rw - tmpfs tmpfs rw\n`;
    expect(containerFrom({ env: {}, mountinfo: podmanMounts })).toBe('container 3f2a9c1b7d0e');
    expect(containerFrom({ env: {}, cgroup: `0::/system.slice/docker-${ID}.scope\n` })).toBe('container 3f2a9c1b7d0e');
    expect(containerFrom({ env: {}, cgroup: `12:memory:/docker/${ID}\n` })).toBe('container 3f2a9c1b7d0e');
    expect(containerFrom({ env: {}, cgroup: '0::/\n', mountinfo: '22 1 259:1 / / rw - ext4 /dev/root rw\n' })).toBe(
      undefined,
    );
  });

  it('is not a container whose mounts the host lists (rootful podman beside the bot)', () => {
    // The host's own mountinfo while a podman container runs: its shm and overlay, mounted outside /etc.
    const hostMounts =
      '22 1 259:1 / / rw - ext4 /dev/root rw\n' +
      `812 30 0:95 / /var/lib/containers/storage/overlay-containers/${ID}/userdata/shm rw - tmpfs shm rw\n` +
      `815 30 0:96 / /var/lib/containers/storage/overlay/${ID}/merged rw - overlay overlay rw\n`;
    expect(containerFrom({ env: {}, cgroup: '0::/user.slice\n', mountinfo: hostMounts })).toBe(undefined);
  });

  it('is this process on this host', () => {
    const me = lockHolder({ POD_NAME: 'bot-1', POD_NAMESPACE: 'ns' });
    expect(me).toMatchObject({ pid: process.pid, container: 'pod ns/bot-1' });
    expect(Date.parse(me.since)).toBeLessThanOrEqual(Date.now());
  });
});
