import { describe, expect, it } from 'vitest';
import { InstanceLifecycle, type InstanceStatus } from '../../src/engine/instance-lifecycle.js';

/** Drives a fresh lifecycle along `path`, returning whether each move happened and where it ended. */
function drive(path: readonly InstanceStatus[]): { moved: boolean[]; status: InstanceStatus } {
  const l = new InstanceLifecycle();
  const moved = path.map((to) => l.move(to, `why ${to}`));
  return { moved, status: l.status };
}

describe('instance lifecycle', () => {
  it('runs, pauses with a reason, resumes and stops', () => {
    const l = new InstanceLifecycle();
    expect(l.status).toBe('idle');
    expect(l.move('running')).toBe(true);
    expect(l.move('paused', 'onTick threw')).toBe(true);
    expect(l.reason).toBe('onTick threw');
    expect(l.move('running')).toBe(true);
    expect(l.reason).toBeUndefined();
    expect(l.move('stopped')).toBe(true);
    expect(l.status).toBe('stopped');
  });

  it('refuses the moves the table does not list, changing nothing', () => {
    expect(drive(['paused'])).toEqual({ moved: [false], status: 'idle' });
    expect(drive(['refused', 'running'])).toEqual({ moved: [true, false], status: 'refused' });
    expect(drive(['running', 'paused', 'paused'])).toEqual({ moved: [true, true, false], status: 'paused' });
    // A paused instance keeps its state and reason when the engine stops.
    expect(drive(['running', 'paused', 'stopped'])).toEqual({ moved: [true, true, false], status: 'paused' });
    expect(drive(['running', 'stopped', 'running'])).toEqual({ moved: [true, true, false], status: 'stopped' });
  });
});
