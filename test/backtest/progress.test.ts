/** The terminal progress line: figures, bar and note on a TTY; nothing at all on a pipe or a file. */
import { expect, it } from 'vitest';
import { progressLine } from '../../src/backtest/progress.js';

function stream(isTTY: boolean): NodeJS.WriteStream & { text: string } {
  const s = { isTTY, text: '', write: (chunk: string) => ((s.text += chunk), true) };
  return s as unknown as NodeJS.WriteStream & { text: string };
}

it('shows done of total, a bar in proportion, the rate, the time left and the note', () => {
  const tty = stream(true);
  const line = progressLine('sweep grid', 'ticks', tty)!;
  line.update(1_500, 6_000, '1/4 runs');
  expect(tty.text).toMatch(
    /^\rsweep grid \[#{6}\.{18}\] 1,500\/6,000 ticks [\d,]+ ticks\/s ETA (\d+s|\d+m\d\ds|\?), 1\/4 runs {2}$/,
  );
  line.end();
  expect(tty.text.endsWith('\n')).toBe(true);
});

it('writes nothing when the stream is not a terminal', () => {
  const pipe = stream(false);
  expect(progressLine('backtest', 'ticks', pipe)).toBeUndefined();
  expect(pipe.text).toBe('');
});
