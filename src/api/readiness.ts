/**
 * Whether the daemon is doing its job, for /readyz: the market polls and the orders poll each succeeded
 * lately (within a few times their schedule, so a hung request or a hook that never returns turns it
 * false as surely as an error does), the database takes a write and is still the file at DB_PATH with no
 * write refused since the last reconciliation, and no authentication failure halts
 * trading. Each failing condition is named.
 */
import type { JobStats } from '../ports/scheduler.js';

export interface ReadinessInputs {
  now: () => number;
  jobs: () => JobStats[];
  /** Throws when the database cannot take a write. */
  checkWritable: () => void;
  /** Why trading is halted by an authentication failure, or undefined. */
  halted: () => string | undefined;
  /** Why the journal cannot be trusted (its file gone or replaced, a write refused), or undefined. */
  journal: () => string | undefined;
  /** The engine runs its jobs (not starting, not stopping). */
  running: () => boolean;
}

export interface ReadinessOptions {
  /** A poll is stale after this many times its schedule's interval… */
  factor: number;
  /** …but never sooner than this (a one-second schedule must survive one slow answer). */
  minStaleMs: number;
}

export const DEFAULT_READINESS: ReadinessOptions = { factor: 3, minStaleMs: 10_000 };

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

export interface Readiness {
  ready: boolean;
  checks: Check[];
}

/** The polls readiness watches: every market job and the orders poll (the refresh is too rare to say much). */
function watched(job: JobStats): boolean {
  return job.name.startsWith('market ') || job.name === 'orders poll';
}

function pollCheck(job: JobStats, now: number, options: ReadinessOptions): Check {
  const staleAfter = Math.max(options.factor * (job.intervalMs ?? 60_000), options.minStaleMs);
  const since = job.lastSucceededAt ?? job.scheduledAt;
  const age = now - since;
  const ok = age <= staleAfter;
  const last = job.lastSucceededAt === undefined ? 'no success yet' : `last success ${(age / 1000).toFixed(1)} s ago`;
  const running =
    job.running && job.lastStartedAt !== undefined
      ? `, running for ${((now - job.lastStartedAt) / 1000).toFixed(1)} s`
      : '';
  return {
    name: job.name,
    ok,
    detail: `${last}${running} (stale after ${(staleAfter / 1000).toFixed(0)} s; ${job.failures} failures in ${job.runs} runs)`,
  };
}

export function readiness(inputs: ReadinessInputs, options: ReadinessOptions = DEFAULT_READINESS): Readiness {
  const now = inputs.now();
  const checks: Check[] = [];
  const running = inputs.running();
  checks.push({ name: 'engine', ok: running, detail: running ? 'running' : 'not running (starting or stopping)' });
  const jobs = inputs.jobs().filter(watched);
  if (jobs.length === 0) checks.push({ name: 'polls', ok: false, detail: 'no poll is scheduled' });
  for (const job of jobs) checks.push(pollCheck(job, now, options));
  try {
    inputs.checkWritable();
    checks.push({ name: 'database', ok: true, detail: 'writable' });
  } catch (err) {
    checks.push({
      name: 'database',
      ok: false,
      detail: `not writable: ${err instanceof Error ? err.message : String(err)}`,
    });
  }
  const journal = inputs.journal();
  checks.push({ name: 'journal', ok: journal === undefined, detail: journal ?? 'ok' });
  const halted = inputs.halted();
  checks.push({ name: 'authentication', ok: halted === undefined, detail: halted ?? 'ok' });
  return { ready: checks.every((c) => c.ok), checks };
}
