/**
 * Which venue a run uses, decided from the environment alone, and the banner that says it. The rule is meant
 * to leave no doubt: only MODE=live trades on the exchange; anything else is paper, even with a base URL and
 * keys set (then the exchange's public market watch feeds the local simulated exchange, and the keys are unused).
 */
import type { Env } from './env.js';

export type VenuePlan =
  | { mode: 'live'; baseUrl: string }
  /** Paper on a recording replayed into the embedded simulated exchange. */
  | { mode: 'paper'; data: 'recording'; speed: number; lockstep: boolean }
  /** Paper on the live market watch of `upstream`, matched locally; `keysIgnored` when keys were set. */
  | { mode: 'paper'; data: 'live'; upstream: string; keysIgnored: boolean };

export function planVenue(env: Env): VenuePlan {
  if (env.MODE === 'live') {
    // parseEnv already requires the URL and keys with MODE=live.
    return { mode: 'live', baseUrl: env.EXCHANGE_BASE_URL as string };
  }
  if (env.EXCHANGE_BASE_URL !== undefined) {
    return {
      mode: 'paper',
      data: 'live',
      upstream: env.EXCHANGE_BASE_URL,
      keysIgnored: env.EXCHANGE_API_KEY !== undefined,
    };
  }
  return { mode: 'paper', data: 'recording', speed: env.PAPER_SPEED, lockstep: env.PAPER_LOCKSTEP };
}

/** The banner's one line: what is traded where, on which data. */
export function bannerText(
  plan: VenuePlan,
  details: { simUrl?: string; files?: readonly string[]; replaying?: string },
): string {
  if (plan.mode === 'live') return `*** LIVE TRADING on ${plan.baseUrl}: real orders with real money ***`;
  const sim = details.simUrl === undefined ? '' : ` (simulated exchange at ${details.simUrl})`;
  if (plan.data === 'live') {
    const keys = plan.keysIgnored ? '; API keys are set but unused: set MODE=live to trade for real' : '';
    return `PAPER TRADING on live prices from ${plan.upstream}, orders filled locally${sim}; nothing is sent to the exchange${keys}`;
  }
  const pace = plan.lockstep ? 'one tick per market poll' : `${plan.speed}x recorded speed`;
  const files = (details.files ?? []).join(', ');
  const replaying = details.replaying === undefined ? '' : `; ${details.replaying}`;
  return `PAPER TRADING on recorded data${sim}: ${files} at ${pace}${replaying}`;
}
