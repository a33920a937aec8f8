/**
 * Paper on recordings behind its pace: the replay clock waits for the daemon (clocks/replay-clock.ts), so nothing
 * is skipped, and this says so when it matters. Past REPLAY_LAG_WARN_MS of wall time behind: a warning and a
 * `replay-behind` event (status, notifications); while behind, the lag again at most once a minute; back under a
 * fifth of the bound: a line and a `replay-caught-up` event.
 */
import { wallClock } from '../clocks/wall-clock.js';
import type { ReplayClock } from '../clocks/replay-clock.js';
import type { Logger } from '../ops/logger.js';
import { REPLAY_LAG_WARN_MS } from '../status/status-view.js';
import type { Store } from '../store/store.js';

const RETELL_MS = 60_000;

export function watchReplayLag(clock: ReplayClock, store: Store, logger: Logger): void {
  let behind = false;
  let toldAt = 0;
  clock.watchLag((lagMs) => {
    const wallMs = lagMs / clock.pace;
    const now = wallClock.now();
    if (!behind && wallMs <= REPLAY_LAG_WARN_MS) return;
    const data = { lagMs: Math.round(lagMs), speed: clock.pace, wallSeconds: Number((wallMs / 1000).toFixed(1)) };
    const lag = `${data.wallSeconds} s of wall time (${Math.round(lagMs / 1000)} s recorded)`;
    if (!behind) {
      behind = true;
      toldAt = now;
      logger.warn(
        data,
        `paper replay ${lag} behind PAPER_SPEED's pace (${clock.pace}x, over the bound of ${REPLAY_LAG_WARN_MS / 1000} s): ` +
          "the recording's clock waits for the daemon, nothing is skipped",
      );
      store.events.record(clock.now(), undefined, 'replay-behind', data);
    } else if (wallMs < REPLAY_LAG_WARN_MS / 5) {
      behind = false;
      logger.info(data, `paper replay back on PAPER_SPEED's pace (${clock.pace}x)`);
      store.events.record(clock.now(), undefined, 'replay-caught-up', data);
    } else if (now - toldAt >= RETELL_MS) {
      toldAt = now;
      logger.warn(data, `paper replay still ${lag} behind PAPER_SPEED's pace (${clock.pace}x)`);
    }
  });
}
