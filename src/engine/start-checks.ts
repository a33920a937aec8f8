/**
 * What a start checks before anything is sent (Engine.start): open orders on an account whose journal is empty
 * (another bot, or a journal that was deleted, may own them), and each instance's needs of the venue and its pair.
 */
import { BotError } from '../errors.js';
import type { EngineParts } from './engine-parts.js';
import type { InstanceRunner } from './instance-runner.js';

/** An empty journal and open orders on the account: nothing is sent until the operator says how. */
export async function refuseForeignOrders(p: EngineParts): Promise<void> {
  const { guard, venue } = p;
  const open = await guard.call('open orders', () => venue.openOrders());
  if (open.length === 0) return;
  const bySymbol = new Map<string, number>();
  for (const o of open) bySymbol.set(o.symbol, (bySymbol.get(o.symbol) ?? 0) + 1);
  const listed = [...bySymbol].map(([symbol, n]) => `${symbol} ${n}`).join(', ');
  throw new BotError(
    'E_FOREIGN_ORDERS',
    `the journal is empty and the account has ${open.length} open order(s) (${listed}): another bot, or a ` +
      'journal that was deleted, may own them. Nothing was sent. Cancel them on the exchange, or start with ' +
      '--adopt-open-orders (ADOPT_OPEN_ORDERS=true) to journal them as external orders and trade beside them.',
    { context: { openOrders: open.length } },
  );
}

/** Why `r` cannot run on this venue and pair (it is refused at start), or undefined. */
export function startProblem(p: EngineParts, r: InstanceRunner): string | undefined {
  if (r.definition.requiresCancel === true && !p.venue.cancelOrder)
    return `strategy ${r.definition.name} requires cancel, which this venue does not support`;
  const rules = p.market.rules.get(r.symbol);
  if (!rules) return `symbol ${r.symbol} is not in the venue's pair configuration`;
  const missing = (r.definition.orderTypes ?? []).filter(
    (t) => !rules.orderTypes.has(t) || (t === 'OCO' && !rules.ocoAllowed),
  );
  if (missing.length > 0) return `strategy ${r.definition.name} uses ${missing.join(', ')}, not allowed on ${r.symbol}`;
  return undefined;
}
