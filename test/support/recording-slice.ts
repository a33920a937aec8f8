/** A stretch of a recording written as a recording of its own (its header kept): a test's own short data. */
import type { WireTicker } from '../../src/wire/schemas.js';
import type { RecordingHeader } from '../../src/record/recording-format.js';
import { readRecording } from '../../src/record/recording-reader.js';
import { RecordingWriter } from '../../src/record/recording-writer.js';

/**
 * Writes the tickers of `source` with from <= time < to to `file`; returns its first and last ticker times.
 * `header` changes the header written (e.g. the pair's configuration); `hole` leaves out the tickers of a stretch
 * (a recorder that was down).
 */
export async function writeSlice(
  source: string,
  file: string,
  from: number,
  to: number,
  header: (h: RecordingHeader) => RecordingHeader = (h) => h,
  hole?: { from: number; to: number },
): Promise<{ first: number; last: number }> {
  let read: RecordingHeader | undefined;
  const ticks: WireTicker[] = [];
  for await (const t of readRecording(source, { from, to, onHeader: (h) => (read = h) }))
    if (hole === undefined || t.t < hole.from || t.t >= hole.to) ticks.push(t);
  const writer = await RecordingWriter.open(file, { header: header(read!) });
  await writer.writeTickers(ticks);
  await writer.close();
  return { first: ticks[0]!.t, last: ticks[ticks.length - 1]!.t };
}
