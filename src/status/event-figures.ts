/**
 * An event's figures rounded for people, as a fill's are: the journal keeps every digit (a trailing level is a
 * float, an entry an exact average of sixty digits), the API's event list, the operator actions in status and
 * the notifications show prices to the pair's tick and quantities to its step, as the rules of the event's symbol
 * say (8 places for a pair whose rules are not known, or a row without a symbol).
 */
import { rounder } from '../market/display.js';
import type { PairRules } from '../market/pair-rules.js';

/** The declared exits' events: the ones whose data carries prices and a quantity. */
const EXIT_KINDS: ReadonlySet<string> = new Set(['exit-triggered', 'exit-held', 'held-exit-filled']);
const PRICE_KEYS = ['price', 'level', 'entry', 'stopPrice', 'limitPrice', 'takeProfit'] as const;

const isDecimalText = (x: unknown): x is string => typeof x === 'string' && /^-?\d+(\.\d+)?$/.test(x);
const isFigure = (x: unknown): x is number | string =>
  (typeof x === 'number' && Number.isFinite(x)) || isDecimalText(x);

/** The event's data with its figures rounded (the same object when the kind carries none). */
export function roundedEventData(
  kind: string,
  data: Record<string, unknown>,
  rules: (symbol: string) => PairRules | undefined,
): Record<string, unknown> {
  if (!EXIT_KINDS.has(kind)) return data;
  const r = rounder(typeof data.symbol === 'string' ? rules(data.symbol) : undefined);
  const out = { ...data };
  for (const key of PRICE_KEYS) if (isFigure(out[key])) out[key] = r.price(out[key]);
  if (isFigure(out.quantity)) out.quantity = r.base(out.quantity);
  return out;
}
