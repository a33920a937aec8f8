/**
 * `protections.maxDrawdown`: the closed trades (within `windowMinutes`, when set) compounded `pct` under their best
 * stop entries for `pauseMinutes`.
 */
import type { ClosedTrade } from '../../../market/round-trips.js';
import type { ProtectionsDecl } from '../../../strategy/api.js';
import { minutesText, TradesProtection, tradesKind } from './protection.js';

type Declared = NonNullable<ProtectionsDecl['maxDrawdown']>;

class MaxDrawdown extends TradesProtection<Declared> {
  protected tripReason(trades: readonly ClosedTrade[]): string | undefined {
    const { pct, windowMinutes } = this.declared;
    let equity = 1;
    let peak = 1;
    for (const t of trades) {
      equity *= 1 + (t.pnlRatio?.toNumber() ?? 0);
      peak = Math.max(peak, equity);
    }
    const drawdownPct = (1 - equity / peak) * 100;
    if (!(drawdownPct >= pct)) return undefined;
    const window = windowMinutes === undefined ? '' : ` within ${minutesText(windowMinutes)}`;
    return `closed trades ${drawdownPct.toFixed(2)} % under their best${window} (protections.maxDrawdown, ${pct} %)`;
  }
}

export const maxDrawdown = tradesKind<Declared>('maxDrawdown', MaxDrawdown);
