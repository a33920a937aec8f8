/**
 * Exits and protections a strategy file declares and the engine enforces on the instance's position, whatever
 * the strategy does (Freqtrade's stoploss, trailing stop and minimal ROI, and its protections): checked on
 * every tick from the position's average entry, the time it was opened and the highest price since. A trigger
 * sells the position less dust through the order manager's one path (position-exit.ts's submitExit: brakes,
 * rules, risk, balance, journal before send), tagged `exit:<reason>`, and is recorded as an `exit-triggered`
 * event. Exactly once: nothing is triggered while an exit order of the instance is working or its outcome is
 * being reconciled, and a restart decides again from the journal and the fills (the position).
 */
import type { ExitRulesDecl, ProtectionsDecl } from '../strategy/api.js';

/** Why the engine sells: the tag is `exit:<reason>`. */
export type ExitReason = 'stop-loss' | 'trailing-stop' | 'roi';

export const ENGINE_EXIT_TAG_PREFIX = 'exit:';

export interface ExitTrigger {
  reason: ExitReason;
  /** The price level that was reached (the stop, the trailing stop, the ROI target). */
  level: number;
}

/** What the watch keeps across restarts (the store's strategy_state, key `<instance>/exits`). */
export interface WatchState {
  /** When the position was opened (its first fill after flat), epoch ms. */
  openedAt?: number;
  /** Highest price seen since. */
  peak?: number;
  /** No entries before this time (a cooldown after a stop-out). */
  cooldownUntil?: number;
}

/** The ROI table as sorted [minutes held, minimum profit %] rows. */
function roiRows(roi: Readonly<Record<string, number>> | undefined): [number, number][] {
  if (roi === undefined) return [];
  return Object.entries(roi)
    .map(([minutes, pct]): [number, number] => [Number(minutes), pct])
    .sort((a, b) => a[0] - b[0]);
}

/** One instance's declared exits, checked on ticks. */
export class PositionWatch {
  state: WatchState = {};
  private readonly roi: [number, number][];

  constructor(
    readonly exits: ExitRulesDecl,
    readonly protections: ProtectionsDecl,
  ) {
    this.roi = roiRows(exits.roi);
  }

  get active(): boolean {
    const e = this.exits;
    return e.stopLossPct !== undefined || e.trailingStopPct !== undefined || this.roi.length > 0;
  }

  /** The position opened (at `time`, at `price`) or closed. */
  opened(time: number, price: number): void {
    this.state.openedAt = time;
    this.state.peak = price;
  }

  closed(): void {
    delete this.state.openedAt;
    delete this.state.peak;
  }

  /** A tick while the position is held: the exit to make, if any. `entry` is the average entry price. */
  check(now: number, last: number, entry: number): ExitTrigger | undefined {
    const s = this.state;
    if (s.peak === undefined || last > s.peak) s.peak = last;
    const { stopLossPct, trailingStopPct, trailingActivationPct } = this.exits;
    if (stopLossPct !== undefined) {
      const level = entry * (1 - stopLossPct / 100);
      if (last <= level) return { reason: 'stop-loss', level };
    }
    if (trailingStopPct !== undefined) {
      const armedAt = entry * (1 + (trailingActivationPct ?? 0) / 100);
      const level = s.peak * (1 - trailingStopPct / 100);
      if (s.peak >= armedAt && last <= level) return { reason: 'trailing-stop', level };
    }
    if (this.roi.length > 0) {
      const held = (now - (s.openedAt ?? now)) / 60_000;
      let target: number | undefined;
      for (const [minutes, pct] of this.roi) if (held >= minutes) target = pct;
      if (target !== undefined) {
        const level = entry * (1 + target / 100);
        if (last >= level) return { reason: 'roi', level };
      }
    }
    return undefined;
  }

  /** An exit was triggered at `now`: a stop-out starts the cooldown. */
  triggered(now: number, reason: ExitReason): void {
    const minutes = this.protections.cooldownMinutes;
    if (minutes !== undefined && reason !== 'roi') this.state.cooldownUntil = now + minutes * 60_000;
  }

  /** Why a new entry is refused now, undefined when it may go. */
  entryBlock(now: number): string | undefined {
    const until = this.state.cooldownUntil;
    if (until !== undefined && now < until)
      return `cooldown after a stop-out until ${new Date(until).toISOString()} (protections.cooldownMinutes)`;
    return undefined;
  }
}
