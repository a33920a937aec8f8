/**
 * `protections.maxDrawdown`: the closed trades (within `windowMinutes`, when set) compounded `pct` under their best
 * stop entries for `pauseMinutes`.
 */
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

type Declared = NonNullable<ProtectionsDecl['maxDrawdown']>;

class MaxDrawdown implements Protection {
  readonly countsTrades = true;

  constructor(
    private readonly declared: Declared,
    private readonly state: ProtectionState,
  ) {}

  tradesClosed(trades: readonly ClosedTrade[], now: number): Trip | undefined {
    const { pct, windowMinutes, pauseMinutes } = this.declared;
    if (tripRunning(this.state, 'maxDrawdown', now)) return undefined;
    let equity = 1;
    let peak = 1;
    for (const t of tradesSince(trades, this.state, 'maxDrawdown', now, windowMinutes)) {
      equity *= 1 + (t.pnlRatio?.toNumber() ?? 0);
      peak = Math.max(peak, equity);
    }
    const drawdownPct = (1 - equity / peak) * 100;
    if (!(drawdownPct >= pct)) return undefined;
    const window = windowMinutes === undefined ? '' : ` within ${minutesText(windowMinutes)}`;
    const reason = `closed trades ${drawdownPct.toFixed(2)} % under their best${window} (protections.maxDrawdown, ${pct} %)`;
    return tripOn(this.state, 'maxDrawdown', now, pauseMinutes, reason);
  }

  exitTriggered(): undefined {
    return undefined;
  }

  entryBlock(now: number): string | undefined {
    return tripBlock(this.state, 'maxDrawdown', now);
  }
}

export const maxDrawdown: ProtectionKind<Declared> = {
  make: (declared, state) => new MaxDrawdown(declared, state),
  drop: (state) => (endTrip(state, 'maxDrawdown') ? 'maxDrawdown' : undefined),
};
