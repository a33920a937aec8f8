/**
 * `protections.cooldownMinutes`: after a stop-out (a stop-loss or trailing-stop exit, on a tick or held on the
 * exchange), no new entry for that many minutes. It ends silently when over; a reload that takes it away while it
 * runs tells it lifted.
 */
import type { ExitReason } from '../exit-rules.js';
import { minutesText, type Protection, type ProtectionKind, type ProtectionState, type Trip } from './protection.js';

class Cooldown implements Protection {
  readonly countsTrades = false;

  constructor(
    private readonly minutes: number,
    private readonly state: ProtectionState,
  ) {}

  tradesClosed(): undefined {
    return undefined;
  }

  exitTriggered(reason: ExitReason, now: number): Trip | undefined {
    if (reason === 'roi') return undefined;
    const until = now + this.minutes * 60_000;
    this.state.cooldownUntil = until;
    return {
      protection: 'cooldown',
      until,
      reason: `cooldown of ${minutesText(this.minutes)} after a stop-out (${reason}) (protections.cooldownMinutes)`,
    };
  }

  entryBlock(now: number): string | undefined {
    const until = this.state.cooldownUntil;
    return until !== undefined && now < until
      ? `cooldown after a stop-out until ${new Date(until).toISOString()} (protections.cooldownMinutes)`
      : undefined;
  }
}

export const cooldown: ProtectionKind<number> = {
  make: (minutes, state) => new Cooldown(minutes, state),
  drop(state, now) {
    const until = state.cooldownUntil;
    if (until === undefined) return undefined;
    delete state.cooldownUntil;
    // A cooldown running ends (and is told lifted, as status showed it); one over already goes silently.
    return until > now ? 'cooldown' : undefined;
  },
};
