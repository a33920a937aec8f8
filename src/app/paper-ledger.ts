/**
 * The embedded simulated exchange's ledger, kept in the bot's database (store/paper-exchange.ts), so paper
 * trading survives restarts, kill -9 included.
 *
 * Same file, own tables, own transactions: the exchange commits each change (a place, a cancel, a tick that
 * filled or triggered something) in one transaction before the operation returns, so before the HTTP server
 * answers; the bot's journal commits its own. They are never written together, on purpose: the journal is
 * reconciled against the exchange at start exactly as live is against the real exchange, which is what paper
 * is meant to rehearse (a crash between the exchange's commit and the journal's leaves a PENDING row that the
 * reconciler resolves from the exchange's open orders and history). One file keeps what belongs together
 * together: one DB_PATH, one backup, one archive on --fresh, and the paper/live check covers both.
 *
 * Between changes, `checkpoint` (every few seconds and at stop) writes the last prices and the replay position.
 * A replay resumed from a checkpoint older than the crash re-feeds a few seconds of ticks; that is harmless:
 * nothing changed in that span (any change would have committed a newer position), and the engine is
 * deterministic, so the same ticks on the same state change nothing again.
 */
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { plain } from '../market/decimal.js';
import type { ClockReading } from '../ports/clock.js';
import type { LedgerFill, LedgerOrder, LedgerPage } from '../ports/ledger-records.js';
import type { ReplayPosition } from '../sim/feeds.js';
import { fillState, orderState, type SimLedger, type SimState } from '../sim/ledger.js';
import type { MatchingEngine } from '../sim/matching-engine.js';
import type { SimFill, SimOrder } from '../sim/state.js';
import type { PaperData, PaperSnapshot } from '../store/paper-exchange.js';
import type { Store } from '../store/store.js';

/** How often the last prices and the replay position are written when nothing else changes. */
export const CHECKPOINT_INTERVAL_MS = 5_000;

const ReplayPositionSchema = z.object({
  files: z.array(z.string()),
  taken: z.number().int().nonnegative(),
  shift: z.number(),
  first: z.number().optional(),
  last: z.number().optional(),
  step: z.number().optional(),
  base: z.number().optional(),
});

/** The replay position as stored, or undefined (with the reason) when there is none or it cannot be read. */
export function parseReplayPosition(text: string | undefined): ReplayPosition | string {
  if (text === undefined) return 'no replay position was recorded';
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'the recorded replay position is not JSON';
  }
  const parsed = ReplayPositionSchema.safeParse(value);
  return parsed.success
    ? parsed.data
    : `the recorded replay position is malformed (${parsed.error.issues[0]?.message})`;
}

export class PaperLedger implements SimLedger {
  private readonly orders = new Set<SimOrder>();
  private fills: { fill: SimFill; userId: number }[] = [];
  private replay: (() => ReplayPosition | undefined) | undefined;

  constructor(
    private readonly store: Store,
    private readonly engine: MatchingEngine,
    private readonly clock: ClockReading,
  ) {}

  /** Where the replay stands, written with every commit and checkpoint (paper on recorded data). */
  trackReplay(position: () => ReplayPosition | undefined): void {
    this.replay = position;
  }

  orderChanged(order: SimOrder): void {
    this.orders.add(order);
  }

  filled(fill: SimFill, order: SimOrder): void {
    this.fills.push({ fill, userId: order.account.userId });
  }

  commit(): void {
    if (this.orders.size > 0 || this.fills.length > 0) this.write();
  }

  order(id: number): LedgerOrder | undefined {
    return this.store.paper.order(id);
  }

  orderPage(userId: number, page: LedgerPage): LedgerOrder[] {
    return this.store.paper.orderPage(userId, page);
  }

  fillPage(userId: number, page: LedgerPage): LedgerFill[] {
    return this.store.paper.fillPage(userId, page);
  }

  /** Writes the last prices and the replay position, with any change not yet committed. */
  checkpoint(): void {
    this.write();
  }

  private write(): void {
    // After a stop that timed out, the database may be closed under a feed still winding down.
    if (!this.store.db.open) return;
    const paper = this.store.paper;
    this.store.transaction(() => {
      const balances = new Map<string, { userId: number; asset: string; free: string; locked: string }>();
      for (const o of this.orders) {
        paper.putOrder(orderState(o));
        for (const asset of [o.pair.base, o.pair.quote]) {
          const b = o.account.balances.get(asset.id);
          if (b)
            balances.set(`${o.account.userId}:${asset.code}`, {
              userId: o.account.userId,
              asset: asset.code,
              free: plain(b.free),
              locked: plain(b.locked),
            });
        }
      }
      for (const { fill, userId } of this.fills) paper.insertFill(fillState(fill, userId));
      for (const b of balances.values()) paper.putBalance(b);
      for (const m of this.engine.marketState()) paper.putMarket(m);
      const position = this.replay?.();
      if (position) paper.putReplay(JSON.stringify(position), this.clock.now());
    });
    this.orders.clear();
    this.fills = [];
  }
}

/** The persisted state in the engine's restore shape; the daemon's one account takes `apiKey`. */
function simState(snapshot: PaperSnapshot, apiKey: string): SimState {
  if (snapshot.accounts.length !== 1)
    throw new ConfigError([`the paper exchange holds ${snapshot.accounts.length} accounts; the daemon uses one`]);
  const [account] = snapshot.accounts as [PaperSnapshot['accounts'][number]];
  const balances: SimState['accounts'][number]['balances'] = {};
  for (const b of snapshot.balances)
    if (b.userId === account.userId) balances[b.asset] = { free: b.free, locked: b.locked };
  const { open, lastOrderId, lastFillId, symbols, market } = snapshot;
  return { accounts: [{ apiKey, userId: account.userId, balances }], open, lastOrderId, lastFillId, symbols, market };
}

export interface PaperExchangeOpened {
  ledger: PaperLedger;
  /** True when an existing paper account was restored; false when a new one was funded. */
  resumed: boolean;
  /** The starting balances of the account (of this run when new, of its first run when resumed). */
  funding: Record<string, string>;
  /** Where a recorded replay stopped, or why it cannot resume (a sentence). */
  replay: ReplayPosition | string;
  /**
   * The latest time a resumed account's records carry (its last prices, orders and fills, in the venue's
   * time): a replay that starts over must go on after it, or orders would fill before they were placed.
   */
  latest?: number;
}

/**
 * Restores `engine` from the paper exchange in `store` (which must be of the same `data` kind), or creates
 * and funds its account there, then attaches the ledger so every change from now on is committed.
 */
export function openPaperExchange(
  store: Store,
  engine: MatchingEngine,
  options: { data: PaperData; apiKey: string; funding: Record<string, string>; clock: ClockReading; dbPath: string },
): PaperExchangeOpened {
  const snapshot = store.paper.snapshot();
  const ledger = new PaperLedger(store, engine, options.clock);
  const { exchange } = snapshot;
  if (exchange !== undefined && snapshot.accounts.length > 0) {
    if (exchange.data !== options.data) {
      const what = (d: PaperData) => (d === 'live' ? 'live prices' : 'recorded data');
      throw new ConfigError([
        `DB_PATH: ${options.dbPath} holds a paper account trading on ${what(exchange.data)}; this run is on ` +
          `${what(options.data)}. Set PAPER_FRESH=true (or run with --fresh) to archive it and start a new ` +
          'account, or set DB_PATH to another file',
      ]);
    }
    engine.restore(simState(snapshot, options.apiKey), ledger);
    return {
      ledger,
      resumed: true,
      funding: snapshot.accounts[0]?.funding ?? {},
      replay: parseReplayPosition(exchange.replay),
      latest: snapshot.latest,
    };
  }
  const now = options.clock.now();
  engine.createAccount({ apiKey: options.apiKey, balances: options.funding });
  const account = engine.accountState(options.apiKey);
  store.transaction(() => {
    if (exchange === undefined) store.paper.create(options.data, now);
    store.paper.putAccount({ userId: account.userId, funding: options.funding, createdAt: now });
    for (const [asset, b] of Object.entries(account.balances))
      store.paper.putBalance({ userId: account.userId, asset, ...b });
  });
  engine.attachLedger(ledger);
  return { ledger, resumed: false, funding: options.funding, replay: 'a new account starts the replay' };
}
