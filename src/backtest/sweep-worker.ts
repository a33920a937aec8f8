/** A sweep's worker thread: runs the combinations it is sent on the shared recording, one at a time. */
import { parentPort, workerData } from 'node:worker_threads';
import { equityCurve } from './equity-tracker.js';
import { type JobSettings, runJob } from './job.js';
import type { ConfigSource } from './strategy-configs.js';
import type { WorkerReply, WorkerRequest } from './sweep.js';
import { sliceTicks, type TickData } from './tick-data.js';

const { sources, data, settings } = workerData as { sources: ConfigSource[]; data: TickData; settings: JobSettings };
const port = parentPort;
if (!port) throw new Error('sweep-worker.ts runs as a worker thread only');

port.on('message', (request: WorkerRequest) => {
  if ('stop' in request) {
    port.close();
    return;
  }
  const { index } = request;
  const onProgress = request.progress
    ? (done: number, total: number) => port.postMessage({ index, done, total } satisfies WorkerReply)
    : undefined;
  const ticks = request.window ? sliceTicks(data, request.window.from, request.window.to) : data;
  runJob(sources, ticks, settings, request.overrides, { onProgress, keepLog: false })
    // A timer turn before the answer: what the run left due on the timer queue (a strategy's stray
    // setTimeout that throws) fails while the run is still the one the main thread holds this worker to.
    .then((result) => new Promise<typeof result>((resolve) => setTimeout(() => resolve(result), 0)))
    .then(
      ({ run, summary }) =>
        port.postMessage({
          index,
          metrics: summary.metrics,
          ended: summary.endedEarly,
          equity: equityCurve(run.equity),
        } satisfies WorkerReply),
      (err: unknown) =>
        port.postMessage({
          index,
          error: err instanceof Error ? err.message : String(err),
        } satisfies WorkerReply),
    );
});
