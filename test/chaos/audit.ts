/**
 * The exactly-once audit of a bot's journal against an exchange's books, for crash and fault suites, live or
 * paper: read the journal with `readJournal(dbPath)`, describe the exchange's side as `ExchangeBooks` (from
 * the simulated exchange's records, or from the paper exchange's ledger with `readPaperBooks`), and
 * `auditJournal` returns every disagreement as a sentence (an empty list: the books agree).
 *
 * It checks, at a quiescent moment (no fill may be in flight between the two sides):
 * - every order on the exchange has exactly one journal row, and every journal row with an exchange id is
 *   on the exchange (no duplicate order, no unknown one); a row without an id certainly never reached it;
 * - every exchange trade is exactly one fill row (by trade id), with the same order, price and quantity
 *   (no doubled fill, no lost fill, no invented one);
 * - each order's filled quantity in the journal is what the exchange executed.
 */
import Database from 'better-sqlite3';
import { D } from '../../src/market/decimal.js';

export interface JournalOrder {
  localId: string;
  symbol: string;
  exchangeId: string | undefined;
  status: string;
  filledQty: string;
}

export interface JournalFill {
  fillKey: string;
  orderLocalId: string;
  symbol: string;
  side: 'BUY' | 'SELL';
  price: string;
  qty: string;
  fee: string;
  feeIn: 'base' | 'quote' | 'other';
}

export interface Journal {
  orders: JournalOrder[];
  fills: JournalFill[];
}

export interface ExchangeOrder {
  /** The id the bot journals as exchange_id. */
  id: string;
  executedQty: string;
}

export interface ExchangeTrade {
  /** The id the bot journals as fill_key. */
  id: string;
  orderId: string;
  price: string;
  qty: string;
}

export interface ExchangeBooks {
  orders: ExchangeOrder[];
  trades: ExchangeTrade[];
}

/** Statuses of journal rows that never reached the exchange. */
const NEVER_SENT = new Set(['REJECTED', 'NOT_SENT', 'NOT_PLACED']);

/** The journal of the database at `path`, read in one read transaction (the daemon may be writing). */
export function readJournal(path: string): Journal {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return db.transaction(() => journalOf(db))();
  } finally {
    db.close();
  }
}

export function journalOf(db: Database.Database): Journal {
  const orders = db
    .prepare<[], { local_id: string; symbol: string; exchange_id: string | null; status: string; filled_qty: string }>(
      'SELECT local_id, symbol, exchange_id, status, filled_qty FROM orders ORDER BY local_id',
    )
    .all()
    .map((r) => ({
      localId: r.local_id,
      symbol: r.symbol,
      exchangeId: r.exchange_id ?? undefined,
      status: r.status,
      filledQty: r.filled_qty,
    }));
  const fills = db
    .prepare<
      [],
      {
        fill_key: string;
        order_local_id: string;
        symbol: string;
        side: 'BUY' | 'SELL';
        price: string;
        qty: string;
        fee: string;
        fee_in: 'base' | 'quote' | 'other';
      }
    >('SELECT fill_key, order_local_id, symbol, side, price, qty, fee, fee_in FROM fills ORDER BY fill_key')
    .all()
    .map((r) => ({
      fillKey: r.fill_key,
      orderLocalId: r.order_local_id,
      symbol: r.symbol,
      side: r.side,
      price: r.price,
      qty: r.qty,
      fee: r.fee,
      feeIn: r.fee_in,
    }));
  return { orders, fills };
}

const same = (a: string, b: string) => new D(a).eq(new D(b));

/** Every disagreement between the journal and the exchange's books, one sentence each. */
export function auditJournal(journal: Journal, books: ExchangeBooks): string[] {
  const problems: string[] = [];
  const rowsByExchangeId = new Map<string, JournalOrder[]>();
  const exchangeIdOf = new Map<string, string>();
  for (const o of journal.orders) {
    if (o.exchangeId === undefined) {
      if (!NEVER_SENT.has(o.status))
        problems.push(`journal row ${o.localId} has no exchange id but status ${o.status} (unresolved)`);
      continue;
    }
    exchangeIdOf.set(o.localId, o.exchangeId);
    rowsByExchangeId.set(o.exchangeId, [...(rowsByExchangeId.get(o.exchangeId) ?? []), o]);
  }
  const exchangeOrders = new Map(books.orders.map((o) => [o.id, o]));
  for (const o of books.orders) {
    const rows = rowsByExchangeId.get(o.id) ?? [];
    if (rows.length !== 1) {
      problems.push(`exchange order ${o.id} has ${rows.length} journal rows`);
      continue;
    }
    const row = rows[0]!;
    if (!same(row.filledQty, o.executedQty))
      problems.push(
        `order ${o.id} (${row.localId}): journal filled ${row.filledQty}, the exchange executed ${o.executedQty}`,
      );
  }
  for (const id of rowsByExchangeId.keys())
    if (!exchangeOrders.has(id)) problems.push(`journal has exchange id ${id}, which the exchange does not know`);

  const fillsByKey = new Map<string, JournalFill[]>();
  for (const f of journal.fills) fillsByKey.set(f.fillKey, [...(fillsByKey.get(f.fillKey) ?? []), f]);
  const tradeIds = new Set(books.trades.map((t) => t.id));
  for (const t of books.trades) {
    const fills = fillsByKey.get(t.id) ?? [];
    if (fills.length !== 1) {
      problems.push(`exchange trade ${t.id} (order ${t.orderId}) has ${fills.length} fill rows`);
      continue;
    }
    const f = fills[0]!;
    if (exchangeIdOf.get(f.orderLocalId) !== t.orderId)
      problems.push(`fill ${t.id} is journaled on ${f.orderLocalId}, the trade is of exchange order ${t.orderId}`);
    if (!same(f.price, t.price) || !same(f.qty, t.qty))
      problems.push(`fill ${t.id}: journal ${f.qty} @ ${f.price}, exchange ${t.qty} @ ${t.price}`);
  }
  for (const key of fillsByKey.keys())
    if (!tradeIds.has(key)) problems.push(`journal fill ${key} is no trade of the exchange`);
  return problems;
}
