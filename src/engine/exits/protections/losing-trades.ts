/** `protections.losingTrades`: `count` losing trades closed within `windowMinutes` stop entries for `pauseMinutes`. */
import type { ClosedTrade } from '../../../market/round-trips.js';
import type { ProtectionsDecl } from '../../../strategy/api.js';
import {
  endTrip,
  minutesText,
  type Protection,
  type ProtectionKind,
  type ProtectionState,
  tradesSince,
  type Trip,
  tripBlock,
  tripOn,
  tripRunning,
} from './protection.js';

type Declared = NonNullable<ProtectionsDecl['losingTrades']>;

class LosingTrades implements Protection {
  readonly countsTrades = true;

  constructor(
    private readonly declared: Declared,
    private readonly state: ProtectionState,
  ) {}

  tradesClosed(trades: readonly ClosedTrade[], now: number): Trip | undefined {
    const { count, windowMinutes, pauseMinutes } = this.declared;
    if (tripRunning(this.state, 'losingTrades', now)) return undefined;
    const losses = tradesSince(trades, this.state, 'losingTrades', now, windowMinutes).filter((t) => t.pnl.isNeg());
    if (losses.length < count) return undefined;
    const reason = `${losses.length} losing trades within ${minutesText(windowMinutes)} (protections.losingTrades)`;
    return tripOn(this.state, 'losingTrades', now, pauseMinutes, reason);
  }

  exitTriggered(): undefined {
    return undefined;
  }

  entryBlock(now: number): string | undefined {
    return tripBlock(this.state, 'losingTrades', now);
  }
}

export const losingTrades: ProtectionKind<Declared> = {
  make: (declared, state) => new LosingTrades(declared, state),
  drop: (state) => (endTrip(state, 'losingTrades') ? 'losingTrades' : undefined),
};
