/**
 * A progress line on a terminal: a bar, items done of the total, the rate and the time left. Only when the
 * stream is a TTY (a pipe or a file gets nothing); the wall clock is read here for display only, never by a
 * backtest.
 */
export interface ProgressLine {
  /** `note` is shown after the figures (e.g. how many runs of a sweep are done). */
  update: (done: number, total: number, note?: string) => void;
  end: () => void;
}

const WIDTH = 24;

function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.round(seconds);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

export function progressLine(
  label: string,
  unit: string,
  stream: NodeJS.WriteStream = process.stderr,
): ProgressLine | undefined {
  if (stream.isTTY !== true) return undefined;
  const started = performance.now();
  let shown = false;
  return {
    update: (done, total, note) => {
      const seconds = Math.max((performance.now() - started) / 1000, 1e-3);
      const rate = done / seconds;
      const filled = total > 0 ? Math.round((done / total) * WIDTH) : 0;
      const bar = '#'.repeat(filled) + '.'.repeat(WIDTH - filled);
      const eta = rate > 0 ? duration((total - done) / rate) : '?';
      stream.write(
        `\r${label} [${bar}] ${done.toLocaleString('en-US')}/${total.toLocaleString('en-US')} ${unit} ` +
          `${Math.round(rate).toLocaleString('en-US')} ${unit}/s ETA ${eta}${note === undefined ? '' : `, ${note}`}  `,
      );
      shown = true;
    },
    end: () => {
      if (shown) stream.write('\n');
    },
  };
}
