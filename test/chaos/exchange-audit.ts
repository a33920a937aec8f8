/**
 * The audit after every chaos run: the daemon's journal and fills against the simulated exchange's own order
 * history, trades and balances, read through its HTTP API. It finds no untracked order (every order on the
 * exchange has exactly one journal row), no duplicate, no lost or doubled fill (per order, the recorded fills
 * add up to the exchange's trades exactly), no row left unresolved, and balances that are exactly the
 * starting balances plus the recorded fills, minus their fees.
 *
 * Every pair it is given is read on its own, its orders and fills checked to be journaled on it.
 * It reads the journal with audit.ts's readJournal; unlike auditJournal it matches fills to trades per order
 * by quantity, not per trade id, because a fault suite may push the bot onto fills from executedQty deltas
 * (after repeated trade-history failures), which are keyed by order; and it checks the balances.
 */
import { D, type Dec } from '../../src/market/decimal.js';
import type { ExchangeClient } from '../../src/exchange/client.js';
import { readDb } from '../e2e/daemon-process.js';
import { type JournalOrder, readJournal } from './audit.js';

export interface AuditResult {
  problems: string[];
  orders: number;
  fills: number;
  trades: number;
  /** The same counts for each audited pair. */
  pairs: Map<string, { orders: number; fills: number; trades: number }>;
}

async function allPages<T>(read: (page: number) => Promise<T[]>): Promise<T[]> {
  const out: T[] = [];
  for (let page = 1; ; page++) {
    const items = await read(page);
    out.push(...items);
    if (items.length < 100) return out;
  }
}

const dec = (v: unknown): Dec => new D(String(v));

interface FeeAsset {
  fill_key: string;
  fee_asset: string | null;
}

/**
 * Audits the journal against the exchange's books of every pair in `symbols` (each read with its own symbol,
 * so a fill journaled on the wrong pair is found), the balances over all their assets from `startBalances`.
 */
export async function auditAgainstExchange(
  dbPath: string,
  exchange: ExchangeClient,
  options: { symbols: readonly string[]; startBalances: Record<string, string> },
): Promise<AuditResult> {
  const problems: string[] = [];
  const { orders: rows, fills } = readJournal(dbPath);
  const feeAssets = new Map(
    readDb(dbPath, (db) => db.prepare('SELECT fill_key, fee_asset FROM fills').all() as FeeAsset[]).map((f) => [
      f.fill_key,
      f.fee_asset,
    ]),
  );
  const books = [];
  for (const symbol of options.symbols) {
    const [pair] = await exchange.pairConfig(symbol);
    if (!pair) throw new Error(`no pair config for ${symbol}`);
    books.push({
      symbol,
      pair,
      orders: await allPages((page) => exchange.orderHistory({ symbol, page, pageSize: 100 })),
      trades: await allPages((page) => exchange.tradeHistory({ symbol, page, pageSize: 100 })),
    });
  }
  const balances = await exchange.balance();
  const pairOf = new Map(books.map((b) => [b.symbol, b.pair]));

  // Orders: one journal row per exchange order, on the order's pair, and nothing the exchange does not have.
  const byExchangeId = new Map<string, JournalOrder>();
  for (const row of rows) {
    if (row.status === 'PENDING' || row.status === 'UNKNOWN') problems.push(`${row.localId} is still ${row.status}`);
    if (row.exchangeId === undefined) {
      if (!/^(REJECTED|NOT_SENT|NOT_PLACED)$/.test(row.status))
        problems.push(`${row.localId} has no exchange id but is ${row.status}`);
      continue;
    }
    if (byExchangeId.has(row.exchangeId))
      problems.push(`exchange order ${row.exchangeId} is journaled twice (${row.localId})`);
    byExchangeId.set(row.exchangeId, row);
  }
  const onExchange = new Map<string, string>();
  for (const { symbol, orders } of books)
    for (const o of orders) {
      const id = String(o.displayingId);
      if (onExchange.has(id)) problems.push(`the exchange lists order ${id} twice`);
      onExchange.set(id, symbol);
      const row = byExchangeId.get(id);
      if (!row) problems.push(`${symbol}: exchange order ${id} is not in the journal`);
      else if (row.symbol !== symbol) problems.push(`${symbol}: exchange order ${id} is journaled on ${row.symbol}`);
    }
  for (const id of byExchangeId.keys())
    if (!onExchange.has(id)) problems.push(`journal order ${id} is not on the exchange`);

  // Fills: per order, what the journal recorded on the order's pair equals the exchange's trades, exactly.
  const localToExchange = new Map(rows.map((r) => [r.localId, r.exchangeId]));
  const recorded = new Map<string, { qty: Dec; symbols: Set<string> }>();
  for (const f of fills) {
    const id = localToExchange.get(f.orderLocalId) ?? `local:${f.orderLocalId}`;
    const sum = recorded.get(id) ?? { qty: new D(0), symbols: new Set<string>() };
    recorded.set(id, { qty: sum.qty.plus(f.qty), symbols: sum.symbols.add(f.symbol) });
  }
  const traded = new Map<string, { qty: Dec; symbol: string }>();
  for (const { symbol, trades } of books)
    for (const t of trades) {
      const id = String(t.orderId);
      traded.set(id, { qty: (traded.get(id)?.qty ?? new D(0)).plus(dec(t.baseQty)), symbol });
    }
  for (const [id, t] of traded) {
    const r = recorded.get(id);
    if (!r) problems.push(`${t.symbol}: exchange order ${id}: ${t.qty.toFixed()} traded, no fill recorded (lost)`);
    else if (!r.qty.eq(t.qty))
      problems.push(`${t.symbol}: exchange order ${id}: traded ${t.qty.toFixed()}, recorded ${r.qty.toFixed()}`);
    else if (r.symbols.size !== 1 || !r.symbols.has(t.symbol))
      problems.push(`${t.symbol}: exchange order ${id}: fills recorded on ${[...r.symbols].join(', ')}`);
  }
  for (const [id, r] of recorded)
    if (!traded.has(id)) problems.push(`fill of ${id} (${r.qty.toFixed()}) has no trade on the exchange`);
  const rowFilled = new Map<string, Dec>();
  for (const f of fills) rowFilled.set(f.orderLocalId, (rowFilled.get(f.orderLocalId) ?? new D(0)).plus(f.qty));
  for (const row of rows)
    if (!new D(row.filledQty).eq(rowFilled.get(row.localId) ?? 0))
      problems.push(`${row.localId}: filled_qty ${row.filledQty} differs from its fills`);

  // Balances: start + fills - fees, exactly, in the pairs' assets.
  const expected = new Map<string, Dec>();
  const ids = new Map<string, string>();
  for (const { pair } of books)
    for (const [asset, id] of [
      [pair.baseAsset, pair.baseAssetId],
      [pair.quoteAsset, pair.quoteAssetId],
    ] as const) {
      expected.set(asset, new D(options.startBalances[asset] ?? 0));
      ids.set(asset, String(id));
    }
  const add = (asset: string, amount: Dec) => expected.set(asset, (expected.get(asset) ?? new D(0)).plus(amount));
  for (const f of fills) {
    const pair = pairOf.get(f.symbol);
    if (!pair) {
      problems.push(`fill ${f.fillKey} is on ${f.symbol}, no audited pair`);
      continue;
    }
    const feeAsset =
      feeAssets.get(f.fillKey) ??
      (f.feeIn === 'base' || (f.feeIn !== 'quote' && f.side === 'BUY') ? pair.baseAsset : pair.quoteAsset);
    const qty = new D(f.qty);
    const quote = qty.mul(f.price);
    add(pair.baseAsset, f.side === 'BUY' ? qty : qty.neg());
    add(pair.quoteAsset, f.side === 'BUY' ? quote.neg() : quote);
    add(feeAsset, new D(f.fee).neg());
  }
  for (const [asset, want] of expected) {
    const entry = balances[ids.get(asset) ?? ''];
    const have = entry === undefined ? new D(0) : dec(entry.value);
    if (!have.eq(want))
      problems.push(`balance of ${asset}: exchange ${have.toFixed()}, journal implies ${want.toFixed()}`);
  }
  const pairs = new Map(
    books.map((b) => [
      b.symbol,
      { orders: b.orders.length, trades: b.trades.length, fills: fills.filter((f) => f.symbol === b.symbol).length },
    ]),
  );
  return {
    problems,
    orders: books.reduce((n, b) => n + b.orders.length, 0),
    fills: fills.length,
    trades: books.reduce((n, b) => n + b.trades.length, 0),
    pairs,
  };
}

/** The per-pair counts of an audit, for its summary line: `BTCUSDT 40 fills, ETHUSDT 38 fills`. */
export function pairCounts(audit: AuditResult): string {
  return [...audit.pairs].map(([symbol, p]) => `${symbol} ${p.fills} fills`).join(', ');
}
