/**
 * The audit after every chaos run: the daemon's journal and fills against the simulated exchange's own order
 * history, trades and balances, read through its HTTP API. It finds no untracked order (every order on the
 * exchange has exactly one journal row), no duplicate, no lost or doubled fill (per order, the recorded fills
 * add up to the exchange's trades exactly), no row left unresolved, and balances that are exactly the
 * starting balances plus the recorded fills, minus their fees.
 *
 * It reads the journal with audit.ts's readJournal; unlike auditJournal it matches fills to trades per order
 * by quantity, not per trade id, because a fault suite may push the bot onto fills from executedQty deltas
 * (after repeated trade-history failures), which are keyed by order; and it checks the balances.
 */
import { D, type Dec } from '../../src/market/decimal.js';
import type { ExchangeClient } from '../../src/exchange/client.js';
import { readDb } from '../e2e/daemon-process.js';
import { type JournalFill, type JournalOrder, readJournal } from './audit.js';

export interface AuditResult {
  problems: string[];
  orders: number;
  fills: number;
  trades: number;
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

export async function auditAgainstExchange(
  dbPath: string,
  exchange: ExchangeClient,
  options: { symbol: string; startBalances: Record<string, string> },
): Promise<AuditResult> {
  const { symbol } = options;
  const problems: string[] = [];
  const { orders: rows, fills } = readJournal(dbPath);
  const feeAssets = new Map(
    readDb(dbPath, (db) => db.prepare('SELECT fill_key, fee_asset FROM fills').all() as FeeAsset[]).map((f) => [
      f.fill_key,
      f.fee_asset,
    ]),
  );
  const orders = await allPages((page) => exchange.orderHistory({ symbol, page, pageSize: 100 }));
  const trades = await allPages((page) => exchange.tradeHistory({ symbol, page, pageSize: 100 }));
  const balances = await exchange.balance();
  const [pair] = await exchange.pairConfig(symbol);
  if (!pair) throw new Error(`no pair config for ${symbol}`);

  // Orders: one journal row per exchange order, and nothing in the journal the exchange does not have.
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
  const onExchange = new Set(orders.map((o) => String(o.displayingId)));
  if (onExchange.size !== orders.length) problems.push('the exchange lists an order twice');
  for (const id of onExchange) if (!byExchangeId.has(id)) problems.push(`exchange order ${id} is not in the journal`);
  for (const id of byExchangeId.keys())
    if (!onExchange.has(id)) problems.push(`journal order ${id} is not on the exchange`);

  // Fills: per order, what the journal recorded equals the exchange's trades, exactly.
  const localToExchange = new Map(rows.map((r) => [r.localId, r.exchangeId]));
  const recorded = new Map<string, { qty: Dec; fee: Dec; quote: Dec }>();
  for (const f of fills) {
    const id = localToExchange.get(f.orderLocalId) ?? `local:${f.orderLocalId}`;
    const sum = recorded.get(id) ?? { qty: new D(0), fee: new D(0), quote: new D(0) };
    recorded.set(id, {
      qty: sum.qty.plus(f.qty),
      fee: sum.fee.plus(f.fee),
      quote: sum.quote.plus(new D(f.qty).mul(f.price)),
    });
  }
  const traded = new Map<string, { qty: Dec; fee: Dec }>();
  for (const t of trades) {
    const id = String(t.orderId);
    const sum = traded.get(id) ?? { qty: new D(0), fee: new D(0) };
    traded.set(id, { qty: sum.qty.plus(dec(t.baseQty)), fee: sum.fee.plus(dec(t.feeMetadata?.feeValue ?? 0)) });
  }
  for (const [id, t] of traded) {
    const r = recorded.get(id);
    if (!r) problems.push(`exchange order ${id}: ${t.qty.toFixed()} traded, no fill recorded (lost)`);
    else if (!r.qty.eq(t.qty))
      problems.push(`exchange order ${id}: traded ${t.qty.toFixed()}, recorded ${r.qty.toFixed()}`);
  }
  for (const [id, r] of recorded)
    if (!traded.has(id)) problems.push(`fill of ${id} (${r.qty.toFixed()}) has no trade on the exchange`);
  const rowFilled = new Map<string, Dec>();
  for (const f of fills) rowFilled.set(f.orderLocalId, (rowFilled.get(f.orderLocalId) ?? new D(0)).plus(f.qty));
  for (const row of rows)
    if (!new D(row.filledQty).eq(rowFilled.get(row.localId) ?? 0))
      problems.push(`${row.localId}: filled_qty ${row.filledQty} differs from its fills`);

  // Balances: start + fills - fees, exactly, in the pair's two assets.
  const expected = new Map<string, Dec>([
    [pair.baseAsset, new D(options.startBalances[pair.baseAsset] ?? 0)],
    [pair.quoteAsset, new D(options.startBalances[pair.quoteAsset] ?? 0)],
  ]);
  const feeAsset = (f: JournalFill) =>
    feeAssets.get(f.fillKey) ??
    (f.feeIn === 'base' || (f.feeIn !== 'quote' && f.side === 'BUY') ? pair.baseAsset : pair.quoteAsset);
  const add = (asset: string, amount: Dec) => expected.set(asset, (expected.get(asset) ?? new D(0)).plus(amount));
  for (const f of fills) {
    const qty = new D(f.qty);
    const quote = qty.mul(f.price);
    add(pair.baseAsset, f.side === 'BUY' ? qty : qty.neg());
    add(pair.quoteAsset, f.side === 'BUY' ? quote.neg() : quote);
    add(feeAsset(f), new D(f.fee).neg());
  }
  const ids = new Map([
    [pair.baseAsset, String(pair.baseAssetId)],
    [pair.quoteAsset, String(pair.quoteAssetId)],
  ]);
  for (const [asset, want] of expected) {
    const entry = balances[ids.get(asset) ?? ''];
    const have = entry === undefined ? new D(0) : dec(entry.value);
    if (!have.eq(want))
      problems.push(`balance of ${asset}: exchange ${have.toFixed()}, journal implies ${want.toFixed()}`);
  }
  return { problems, orders: orders.length, fills: fills.length, trades: trades.length };
}
