/** `protections.losingTrades`: `count` losing trades closed within `windowMinutes` stop entries for `pauseMinutes`. */
import type { ClosedTrade } from '../../../market/round-trips.js';
import type { ProtectionsDecl } from '../../../strategy/api.js';
import { minutesText, TradesProtection, tradesKind } from './protection.js';

type Declared = NonNullable<ProtectionsDecl['losingTrades']>;

class LosingTrades extends TradesProtection<Declared> {
  protected tripReason(trades: readonly ClosedTrade[]): string | undefined {
    const { count, windowMinutes } = this.declared;
    const losses = trades.filter((t) => t.pnl.isNeg());
    if (losses.length < count) return undefined;
    return `${losses.length} losing trades within ${minutesText(windowMinutes)} (protections.losingTrades)`;
  }
}

export const losingTrades = tradesKind<Declared>('losingTrades', LosingTrades);
