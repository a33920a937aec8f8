/**
 * Paper on recordings behind its pace (issue 38): the replay clock waits for the daemon, and the daemon says so.
 * A replay clock at 1000x on a monotonic time the test moves on: a firing whose work took 6 s of wall time puts it
 * past the bound (5 s): a warning, a `replay-behind` event, `bot status`'s line; then the clock catches up,
 * every match in turn, and says it is back on the pace.
 */
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { watchReplayLag } from '../../src/app/replay-lag.js';
import { ReplayClock } from '../../src/clocks/replay-clock.js';
import { buildStatusView, statusJson, statusTable } from '../../src/status/status-view.js';
import { openStore } from '../../src/store/store.js';
import { captureLogger } from '../support/capture-logger.js';
import { tempDir } from '../support/temp-dir.js';

const T0 = Date.UTC(2023, 2, 10);

describe('a paced replay behind its pace', () => {
  it('warns past 5 s of wall time, records it for status, and says when it is back on the pace', async () => {
    let slept = 0;
    const clock = new ReplayClock(1000, () => performance.now() + slept);
    // Paused while the test sets up, as the daemon's is while it starts: its time stays at the anchor.
    clock.pause();
    clock.anchor(T0);
    const dir = tempDir('replay-lag');
    const store = openStore({ path: join(dir, 'bot.db'), clock });
    const { logger, messages } = captureLogger();
    store.events.record(T0, undefined, 'daemon-started', {
      mode: 'paper',
      venue: 'embedded',
      pid: 4242,
      clock: 'data',
    });
    watchReplayLag(clock, store, logger);
    const view = () => buildStatusView(store, { wallNow: T0, killSwitchFile: join(dir, 'KILL'), isAlive: () => true });
    let statusBehind = '';
    const dues: number[] = [];
    const timer = clock.cron('*/5 * * * * *', (due) => {
      dues.push(due);
      // The first run takes 6 s of wall time (100 recorded minutes at 1000x); the others none.
      if (dues.length === 1) slept += 6_000;
      if (dues.length === 2) statusBehind = statusTable(view());
    });
    expect(clock.now()).toBe(T0);
    clock.resume();
    try {
      await vi.waitFor(() => expect(messages(/back on PAPER_SPEED's pace/)).toHaveLength(1), { timeout: 10_000 });
    } finally {
      timer.cancel();
    }
    // 6 s of wall time and a little (the real time that passed meanwhile).
    const warnings = messages(/behind PAPER_SPEED's pace/);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /^paper replay \d+(\.\d)? s of wall time \(\d{4} s recorded\) behind PAPER_SPEED's pace \(1000x, over the bound of 5 s\): the recording's clock waits for the daemon, nothing is skipped$/,
    );
    expect(statusBehind).toMatch(
      /\nreplay: BEHIND \d{4} s of recorded time \(\d+\.\d s of wall\) behind PAPER_SPEED's pace \(1000x\)/,
    );
    // Nothing skipped: every five-second match of the 100 recorded minutes, in turn, while it caught up.
    expect(dues.length).toBeGreaterThan(1000);
    expect(dues).toEqual(dues.map((_, i) => T0 + (i + 1) * 5_000));
    expect(store.events.latest(['replay-behind', 'replay-caught-up'])?.kind).toBe('replay-caught-up');
    expect(statusJson(view()).replay).toMatchObject({ behind: false });
    store.close();
  });
});
