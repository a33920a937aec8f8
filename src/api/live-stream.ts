/**
 * GET /api/v1/stream: the page's live updates as server-sent events, so it does not poll. Once a second (wall
 * time) the stream looks at the operator layer's reads and sends what changed: `status` (the same JSON as
 * /status, when its ETag changes), `prices` (the chart's points newer than those sent; all of them first),
 * `fills` (a new fill was recorded: the page reads the fills, trades, profit and PnL again) and `ready`
 * (readiness, when it changes); a comment line keeps idle connections open. Bounded: at most
 * MAX_STREAMS at once (503 beyond), each ends when its client goes or the listener closes.
 */
import type { Context } from 'hono';
import { type SSEStreamingApi, streamSSE } from 'hono/streaming';
import type { OperatorQueries } from '../operator/queries.js';
import type { Logger } from '../ops/logger.js';
import type { Timers } from '../ports/clock.js';
import type { Readiness } from './readiness.js';
import { fail } from './responses.js';

/** Streams open at once (a few tabs of a few operators); one more is refused, the page then polls. */
export const MAX_STREAMS = 16;
/** How often a stream looks for changes, in wall time. */
const LOOK_EVERY_MS = 1_000;
/** A comment line this often keeps proxies from closing a quiet stream. */
const KEEP_ALIVE_MS = 15_000;

export interface LiveStreamDeps {
  read: OperatorQueries;
  /** The wall clock: the stream's pace is the browser's, not the venue's (a replay may run 60 times faster). */
  wall: Timers;
  ready: () => Readiness;
  /** Where a stream that failed says why (it ends; the page polls, and the next request reports the fault). */
  logger: Logger;
}

/** The route's handler; counts the streams it serves. */
export function liveStream(deps: LiveStreamDeps): (c: Context) => Response | Promise<Response> {
  let open = 0;
  return (c) => {
    if (open >= MAX_STREAMS)
      return fail(c, 'E_TOO_MANY_STREAMS', `${MAX_STREAMS} live streams are open already: poll instead`);
    open++;
    return streamSSE(c, async (stream) => {
      const stop = new AbortController();
      stream.onAbort(() => stop.abort());
      try {
        await serve(stream, deps, stop.signal);
      } catch (err) {
        deps.logger.warn({ err }, 'control API: a live stream failed and was closed');
      } finally {
        open--;
      }
    });
  };
}

async function serve(stream: SSEStreamingApi, deps: LiveStreamDeps, signal: AbortSignal): Promise<void> {
  const { read, wall } = deps;
  let etag: string | undefined;
  let ready: string | undefined;
  let newestFill: string | null | undefined;
  const sent = new Map<string, number>();
  let lastWrite = wall.now();
  const send = async (event: string, data: string) => {
    await stream.writeSSE({ event, data });
    lastWrite = wall.now();
  };
  while (!signal.aborted) {
    const status = read.status();
    if (status.etag !== etag) {
      etag = status.etag;
      await send('status', status.json);
    }
    const now = deps.ready();
    // What the page shows of it: ready or not, and why not (the passing checks' details change every second).
    const readiness = JSON.stringify({ ready: now.ready, checks: now.checks.filter((check) => !check.ok) });
    if (readiness !== ready) {
      ready = readiness;
      await send('ready', readiness);
    }
    const fill = read.fills({ limit: 1 }).items[0]?.fillKey ?? null;
    if (newestFill !== undefined && fill !== newestFill) await send('fills', '{}');
    newestFill = fill;
    const recent: Record<string, [number, number][]> = {};
    for (const [symbol, points] of Object.entries(read.prices().recent)) {
      const last = sent.get(symbol) ?? -Infinity;
      const fresh = points.filter(([time]) => time > last);
      if (fresh.length === 0) continue;
      recent[symbol] = fresh;
      sent.set(symbol, (fresh[fresh.length - 1] as [number, number])[0]);
    }
    if (Object.keys(recent).length > 0) await send('prices', JSON.stringify({ recent }));
    if (wall.now() - lastWrite >= KEEP_ALIVE_MS) {
      await stream.write(': keep-alive\n\n');
      lastWrite = wall.now();
    }
    await wall.sleep(LOOK_EVERY_MS, signal);
  }
}
