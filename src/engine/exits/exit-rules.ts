/**
 * The exits a strategy file declares and the engine enforces on the instance's position, whatever the strategy
 * does (Freqtrade's stoploss, trailing stop and minimal ROI): checked on every tick from the position's average
 * entry, the time it was opened and the highest price since. A trigger sells the position less dust through the
 * order manager's one path (declared-exits.ts, position-exit.ts), tagged `exit:<reason>`.
 */
import type { ExitRulesDecl } from '../../strategy/api.js';

/** Why the engine sells: the tag is `exit:<reason>`. */
export type ExitReason = 'stop-loss' | 'trailing-stop' | 'roi';

export interface ExitTrigger {
  reason: ExitReason;
  /** The price level that was reached (the stop, the trailing stop, the ROI target). */
  level: number;
}

/** What the exits keep of the position across restarts (beside the protections' state: declared-exits.ts). */
export interface PositionState {
  /** When the position was opened (its first fill after flat), epoch ms. */
  openedAt?: number;
  /** Highest price seen since. */
  peak?: number;
}

/** The ROI table as sorted [minutes held, minimum profit %] rows. */
function roiRows(roi: Readonly<Record<string, number>> | undefined): [number, number][] {
  if (roi === undefined) return [];
  return Object.entries(roi)
    .map(([minutes, pct]): [number, number] => [Number(minutes), pct])
    .sort((a, b) => a[0] - b[0]);
}

/** One instance's declared exits, checked on ticks. */
export class ExitRules {
  private current: PositionState = {};
  private roi: [number, number][];

  constructor(private declared: ExitRulesDecl) {
    this.roi = roiRows(declared.roi);
  }

  /** What is saved of the position (its open time and high). */
  get state(): Readonly<PositionState> {
    return this.current;
  }

  /** The state an earlier run saved, taken up. */
  restore(state: PositionState): void {
    this.current = state;
  }

  get declaration(): ExitRulesDecl {
    return this.declared;
  }

  /** New declarations from a reload, from the next tick; the state is kept (a trailing stop keeps its high). */
  redeclare(declared: ExitRulesDecl): void {
    this.declared = declared;
    this.roi = roiRows(declared.roi);
  }

  /** Whether an exit is declared that ticks check. */
  get active(): boolean {
    const e = this.declared;
    return e.stopLossPct !== undefined || e.trailingStopPct !== undefined || this.roi.length > 0;
  }

  /** Whether the exits take the position as held (opened and not closed since). */
  get held(): boolean {
    return this.current.openedAt !== undefined;
  }

  /** The position opened (at `time`, at `price`) or closed. */
  opened(time: number, price: number): void {
    this.current.openedAt = time;
    this.current.peak = price;
  }

  closed(): void {
    delete this.current.openedAt;
    delete this.current.peak;
  }

  /** A tick while the position is held: the exit to make, if any. `entry` is the average entry price. */
  check(now: number, last: number, entry: number): ExitTrigger | undefined {
    const s = this.current;
    if (s.peak === undefined || last > s.peak) s.peak = last;
    // A position the exits did not see open (held before a reload declared them): held from now. (At a start
    // it is taken from the fill that opened it: DeclaredExits.catchUp.)
    s.openedAt ??= now;
    const { stopLossPct, trailingStopPct, trailingActivationPct } = this.declared;
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
}
