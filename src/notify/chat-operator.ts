/**
 * What the chat commands need from the daemon: the read model behind `bot status`, the account's balances,
 * and the operator's actions. The composition root implements it over the same actions as the control API,
 * so a command from a chat and a request to the API do the same thing and are journaled the same way.
 */
import type { StatusView } from '../status/status-view.js';

export interface BalanceLine {
  asset: string;
  free: string;
  locked: string;
}

/** What an action did: `changed` false when it was already so (actions are idempotent). */
export type ActionResult = { ok: true; changed: boolean; message: string } | { ok: false; message: string };

export interface ChatOperator {
  status(): StatusView;
  balances(): Promise<BalanceLine[]>;
  /** `source` names who asked (`telegram:<chat id>`), for the journal. */
  pause(name: string, source: string): Promise<ActionResult>;
  resume(name: string, source: string): Promise<ActionResult>;
  setKillSwitch(on: boolean, source: string): Promise<ActionResult>;
}
