/**
 * Which journaled orders are exits, and which of them the exchange holds for the engine: the predicates the
 * order path, the declared exits, the held exits and the operator's exit share.
 */
import type { OrderRow } from '../../store/order-journal.js';

/** The tag of every manual exit order (the journal, the trades table, the page). */
export const EXIT_TAG = 'exit';

/** The tags of the exits the engine holds on the exchange (held-exits.ts): a STOP_LIMIT, or an OCO bracket. */
export const HELD_STOP_TAG = 'exit:stop-loss';
export const HELD_BRACKET_TAG = 'exit:bracket';

/** The tag of an order the engine makes for a declared exit (`exit:stop-loss`, `exit:roi`…). */
export const declaredExitTag = (reason: string) => `${EXIT_TAG}:${reason}`;

/** A manual exit (`exit`) or one the engine made for a declared exit (`exit:stop-loss`…). */
export const isExitOrder = (row: OrderRow) =>
  row.side === 'SELL' && (row.tag === EXIT_TAG || row.tag?.startsWith(`${EXIT_TAG}:`) === true);

/** A declared exit the exchange holds for the engine (it rests there while the daemon is down). */
export const isHeldExit = (row: OrderRow) =>
  row.side === 'SELL' &&
  ((row.type === 'STOP_LIMIT' && row.tag === HELD_STOP_TAG) || (row.type === 'OCO' && row.tag === HELD_BRACKET_TAG));
