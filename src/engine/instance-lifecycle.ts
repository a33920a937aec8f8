/**
 * An instance's lifecycle, and the only place its state changes. The allowed moves are the table below; a
 * move it does not list changes nothing (so a second pause, or a stop of a refused instance, is harmless).
 *
 *   idle ──start──> running ──pause──> paused ──resume──> running
 *     │                │                  │
 *     └─refuse─> refused└──stop──> stopped └── (stays paused when the engine stops: its reason is kept)
 */
export type InstanceStatus = 'idle' | 'running' | 'paused' | 'refused' | 'stopped';

const ALLOWED: Readonly<Record<InstanceStatus, readonly InstanceStatus[]>> = {
  idle: ['running', 'refused'],
  running: ['paused', 'stopped'],
  paused: ['running'],
  refused: [],
  stopped: [],
};

/**
 * Whether an instance in `status` has its position protected: its declared exits and protections run on every
 * tick and its stop is held on the exchange. A pause stops the strategy deciding, never that (invariant 13).
 */
export function protects(status: InstanceStatus): boolean {
  return status === 'running' || status === 'paused';
}

export class InstanceLifecycle {
  private current: InstanceStatus = 'idle';
  private why: string | undefined;

  get status(): InstanceStatus {
    return this.current;
  }

  /** Why the instance is paused or refused; undefined while it runs. */
  get reason(): string | undefined {
    return this.why;
  }

  /** Moves to `next` when the table allows it; returns whether it moved. */
  move(next: InstanceStatus, reason?: string): boolean {
    if (!ALLOWED[this.current].includes(next)) return false;
    this.current = next;
    this.why = next === 'paused' || next === 'refused' ? reason : undefined;
    return true;
  }
}
