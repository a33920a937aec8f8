/**
 * A sweep's worker thread: loads the strategy modules at once (while the main thread reads the data), then runs
 * the combinations it is sent on the shared recording, one at a time. The recording comes in workerData (the
 * queue's worker) or in a message once it is read (a SweepPool).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { CandleWalks } from './candle-ticks.js';
import { equityCurve } from './equity-tracker.js';
import { sampleReturns } from './performance-metrics.js';
import { runJob } from './job.js';
import type { JobSettings } from './job-settings.js';
import { type ConfigSource, instancesOf } from './strategy-configs.js';
import type { WorkerReply, WorkerRequest } from './sweep.js';
import type { TickData } from './tick-data.js';

const { sources, settings, ...given } = workerData as {
  sources: ConfigSource[];
  settings: JobSettings;
  data?: TickData;
};
const port = parentPort;
if (!port) throw new Error('sweep-worker.ts runs as a worker thread only');
// A thread does not inherit the main thread's source maps: the strategies it loads from the build name their
// TypeScript source and line in a hook error, as in the main thread (bin/bot.js).
process.setSourceMapsEnabled(true);

// The modules load now; a problem with them is the first combination's to report.
const loaded = Promise.all(sources.map((s) => instancesOf(s))).catch(() => undefined);
let data: TickData | undefined = given.data;
/** The candle walks of this worker's runs on `data`, taken again by the next run on it. */
const walks = new CandleWalks();

port.on('message', (request: WorkerRequest) => {
  if ('data' in request) {
    data = request.data;
    return;
  }
  const { index } = request;
  const onProgress = request.progress
    ? (done: number, total: number) => port.postMessage({ index, done, total } satisfies WorkerReply)
    : undefined;
  loaded
    .then(() =>
      runJob(
        sources,
        data as TickData,
        settings,
        request.overrides,
        { onProgress, keepLog: false, walks, charts: false },
        request.window,
      ),
    )
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
          returns: sampleReturns(run.equity.map((s) => s.equity)),
          dataGaps: { maxGapMs: summary.maxGapMs, gaps: summary.gaps },
        } satisfies WorkerReply),
      (err: unknown) =>
        port.postMessage({
          index,
          error: err instanceof Error ? err.message : String(err),
        } satisfies WorkerReply),
    );
});
