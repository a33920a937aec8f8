/** A sweep's worker thread: runs the combinations it is sent on the shared recording, one at a time. */
import { parentPort, workerData } from 'node:worker_threads';
import { equityCurve } from './equity-tracker.js';
import { type JobSettings, runJob } from './job.js';
import type { ConfigSource } from './strategy-configs.js';
import { endedEarly } from './summary.js';
import type { WorkerReply, WorkerRequest } from './sweep.js';
import type { TickData } from './tick-data.js';

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
  runJob(sources, data, settings, request.overrides, { onProgress }).then(
    ({ run, summary }) =>
      port.postMessage({
        index,
        metrics: summary.metrics,
        ended: endedEarly(summary.instances),
        equity: equityCurve(run.equity),
      } satisfies WorkerReply),
    (err: unknown) =>
      port.postMessage({
        index,
        error: err instanceof Error ? err.message : String(err),
      } satisfies WorkerReply),
  );
});
