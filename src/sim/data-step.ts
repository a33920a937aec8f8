/**
 * The data's step: the usual time between two consecutive prices of one pair (15 s for imported one-minute
 * candles, the polling interval for a market-watch recording). The simulated exchange's default latency is one
 * step, so an order decided on a price reaches the book at the next one (matching-engine.ts, fill model).
 */
import { readRecordingBatches } from '../record/recording-reader.js';

/** How many intervals are looked at: enough to find the usual one, few enough to cost nothing. */
const SAMPLE = 4096;

/** The most frequent positive interval between consecutive times of one series (ms); 0 when there is none. */
export function stepOf(times: Iterable<number>): number {
  const counts = new Map<number, number>();
  let previous: number | undefined;
  let seen = 0;
  for (const t of times) {
    if (previous !== undefined && t > previous) {
      counts.set(t - previous, (counts.get(t - previous) ?? 0) + 1);
      if (++seen >= SAMPLE) break;
    }
    previous = t;
  }
  let best = 0;
  let bestCount = 0;
  for (const [step, n] of counts) if (n > bestCount || (n === bestCount && step < best)) [best, bestCount] = [step, n];
  return best;
}

/** The step of a recording file, from its first tickers (of its first symbol). */
export async function recordedStepMs(file: string): Promise<number> {
  const times: number[] = [];
  let symbol: string | undefined;
  for await (const batch of readRecordingBatches(file, { allowPartial: true, warn: () => undefined })) {
    for (const t of batch) {
      symbol ??= t.s;
      if (t.s === symbol) times.push(t.t);
    }
    if (times.length > SAMPLE) break;
  }
  return stepOf(times);
}
