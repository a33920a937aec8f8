/**
 * Test-only crash points: the chaos suite kills the daemon at a named step of an order's life (SIGKILL on
 * itself, as a power cut would) to prove that a restart on the same database loses and doubles nothing.
 * Honoured only when BOT_TEST_HOOKS=1 is set as well as BOT_CRASH_AT; otherwise `crashPoint` is a check of a
 * module constant and nothing else. BOT_CRASH_AT=step[:n] kills at the n-th time (default 1) the step is hit.
 */
export const CRASH_POINTS = [
  /** The order's journal row (PENDING) is committed; its request has not left. */
  'after-journal',
  /** The venue accepted the order; its answer is not yet in the journal. */
  'after-send',
  /** A fill was seen on the venue; it is not yet recorded. */
  'before-fill-record',
  /** A fill and its order row are committed; the engine (position, declared exits, protections) is not told yet. */
  'after-fill-record',
  /** Orders whose outcome is unknown are being matched against the venue. */
  'during-reconcile',
  /** A manual exit cancelled the instance's orders; its sell is not journaled yet. */
  'exit-after-cancel',
] as const;
export type CrashPoint = (typeof CRASH_POINTS)[number];

function armedPoint(env: NodeJS.ProcessEnv): { point: string; at: number } | undefined {
  if (env.BOT_TEST_HOOKS !== '1' || !env.BOT_CRASH_AT) return undefined;
  const [point = '', count] = env.BOT_CRASH_AT.split(':');
  const at = count === undefined ? 1 : Number(count);
  if (!(CRASH_POINTS as readonly string[]).includes(point) || !Number.isInteger(at) || at < 1)
    throw new Error(
      `BOT_CRASH_AT: expected one of ${CRASH_POINTS.join(', ')}, optionally :N, got '${env.BOT_CRASH_AT}'`,
    );
  return { point, at };
}

const armed = armedPoint(process.env);
let hits = 0;

/** Kills this process at once when the test hooks armed this step (and this is its n-th hit). */
export function crashPoint(point: CrashPoint): void {
  if (armed === undefined || armed.point !== point) return;
  if (++hits < armed.at) return;
  process.kill(process.pid, 'SIGKILL');
}
