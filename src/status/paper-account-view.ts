/**
 * The paper account in `bot status`: the embedded simulated exchange's own books (store/paper-exchange.ts),
 * which outlive restarts, so the account's balances and history read the same after a crash, an upgrade or a
 * container restart; with how many daemon runs it spans.
 */
import { roundedText } from '../market/display.js';
import type { PaperSummary } from '../store/paper-exchange.js';
import type { Store } from '../store/store.js';

export interface PaperAccountView extends PaperSummary {
  /** Daemon starts recorded in this database: the runs the account has lived through. */
  runs: number;
  /** Tickers of the recording replayed in the current pass (paper on recorded data). */
  replayed: number | undefined;
}

function replayedOf(replay: string | undefined): number | undefined {
  if (replay === undefined) return undefined;
  try {
    const taken = (JSON.parse(replay) as { taken?: unknown }).taken;
    return typeof taken === 'number' ? taken : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Undefined when the database holds no paper account (live, or never run on paper). `runs`: the daemon starts
 * recorded in the database (a fresh start archives the database with its account, so they are the account's).
 * Balances and funding are rounded for people to each asset's `places` (its precision in the pairs traded; 8
 * where no pair names it): the paper exchange's tables keep every digit.
 */
export function paperAccountView(
  store: Store,
  runs: number,
  places: ReadonlyMap<string, number>,
): PaperAccountView | undefined {
  const summary = store.paper.summary();
  if (!summary) return undefined;
  const round = (asset: string, amount: string) => roundedText(amount, places.get(asset));
  return {
    ...summary,
    balances: summary.balances.map((b) => ({ ...b, free: round(b.asset, b.free), locked: round(b.asset, b.locked) })),
    funding: Object.fromEntries(Object.entries(summary.funding).map(([asset, a]) => [asset, round(asset, a)])),
    runs,
    replayed: replayedOf(summary.replay),
  };
}

export function paperAccountJson(view: PaperAccountView) {
  return {
    data: view.data,
    since: new Date(view.since).toISOString(),
    runs: view.runs,
    funding: view.funding,
    balances: view.balances.map((b) => ({ asset: b.asset, free: b.free, locked: b.locked })),
    orders: view.orders,
    openOrders: view.openOrders,
    fills: view.fills,
    replayed: view.replayed ?? null,
  };
}

export function paperAccountLines(view: PaperAccountView, short: (ms: number) => string): string[] {
  const data = view.data === 'live' ? 'live prices' : 'recorded data';
  const held = view.balances
    .filter((b) => b.free !== '0' || b.locked !== '0')
    .map((b) => `${b.asset} ${b.free}${b.locked === '0' ? '' : ` (+${b.locked} locked)`}`);
  const funded = Object.entries(view.funding).map(([asset, amount]) => `${asset} ${amount}`);
  const replay = view.replayed === undefined ? '' : `; replay at ticker ${view.replayed} of the current pass`;
  return [
    `paper account: since ${short(view.since)} on ${data}, ${view.runs} run(s); ${view.orders} orders ` +
      `(${view.openOrders} open), ${view.fills} fills${replay}`,
    `  balances: ${held.join(', ') || 'none'}  (funded with ${funded.join(', ')})`,
  ];
}
