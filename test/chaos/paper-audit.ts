/**
 * The paper exchange's persisted ledger (store/paper-exchange.ts, in the bot's own database) as the exchange's
 * books for `auditJournal`, and the exact-money checks: every balance is its funding plus its fills, to the
 * last digit, from the ledger's fills and again from the journal's; what is locked is what the open orders
 * hold; each order executed what its fills add up to.
 */
import Database from 'better-sqlite3';
import { D, type Dec } from '../../src/market/decimal.js';
import { DEFAULT_PAIRS } from '../../src/sim/default-market.js';
import { type DaemonProcess, waitFor } from '../e2e/daemon-process.js';
import { auditJournal, type ExchangeBooks, type JournalFill, journalOf } from './audit.js';

/** The trade id the simulated exchange shows for fill N (sim/records.ts), which the bot journals as fill_key. */
const tradeId = (id: number) => `sim-trade-${id}`;

const PAIRS = new Map(DEFAULT_PAIRS.map((p) => [p.symbol, { base: p.baseAsset, quote: p.quoteAsset }]));

interface LedgerFill {
  id: number;
  order_id: number;
  symbol: string;
  side: 'BUY' | 'SELL';
  price: string;
  base_qty: string;
  quote_qty: string;
  fee: string;
  fee_asset: string;
}

function readLedger(db: Database.Database) {
  const orders = db
    .prepare<
      [],
      { id: number; side: 'BUY' | 'SELL'; symbol: string; status: string; executed_qty: string; locked: string }
    >('SELECT id, side, symbol, status, executed_qty, locked FROM paper_orders ORDER BY id')
    .all();
  const fills = db.prepare<[], LedgerFill>('SELECT * FROM paper_fills ORDER BY id').all();
  const balances = db
    .prepare<[], { asset: string; free: string; locked: string }>('SELECT asset, free, locked FROM paper_balances')
    .all();
  const funding = db.prepare<[], { funding: string }>('SELECT funding FROM paper_accounts').all();
  return { orders, fills, balances, funding };
}

export function paperBooks(ledger: ReturnType<typeof readLedger>): ExchangeBooks {
  return {
    orders: ledger.orders.map((o) => ({ id: String(o.id), executedQty: o.executed_qty })),
    trades: ledger.fills.map((f) => ({
      id: tradeId(f.id),
      orderId: String(f.order_id),
      price: f.price,
      qty: f.base_qty,
    })),
  };
}

/** Adds a fill's effect on the account's assets to `totals`. */
function book(
  totals: Map<string, Dec>,
  fill: { symbol: string; side: 'BUY' | 'SELL'; qty: Dec; quoteQty: Dec; fee: Dec; feeAsset: string },
): void {
  const pair = PAIRS.get(fill.symbol);
  if (!pair) throw new Error(`no pair ${fill.symbol}`);
  const add = (asset: string, amount: Dec) => totals.set(asset, (totals.get(asset) ?? new D(0)).plus(amount));
  add(pair.base, fill.side === 'BUY' ? fill.qty : fill.qty.neg());
  add(pair.quote, fill.side === 'BUY' ? fill.quoteQty.neg() : fill.quoteQty);
  add(fill.feeAsset, fill.fee.neg());
}

function journalFeeAsset(f: JournalFill): string {
  const pair = PAIRS.get(f.symbol);
  if (!pair || f.feeIn === 'other') throw new Error(`fill ${f.fillKey}: fee in ${f.feeIn} on ${f.symbol}`);
  return f.feeIn === 'base' ? pair.base : pair.quote;
}

/**
 * Audits the database at `path` (journal and paper ledger read in one transaction): the journal against the
 * ledger, and the ledger's money. Returns every problem as a sentence, and what was counted.
 */
export function auditPaperDb(path: string): { problems: string[]; orders: number; fills: number } {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return db.transaction(() => {
      const journal = journalOf(db);
      const ledger = readLedger(db);
      const problems = auditJournal(journal, paperBooks(ledger));
      if (ledger.funding.length !== 1) problems.push(`${ledger.funding.length} paper accounts, expected 1`);
      const funding = JSON.parse(ledger.funding[0]?.funding ?? '{}') as Record<string, string>;
      const start = () => new Map(Object.entries(funding).map(([a, v]) => [a, new D(v)]));

      const fromLedger = start();
      const executed = new Map<number, Dec>();
      for (const f of ledger.fills) {
        const qty = new D(f.base_qty);
        book(fromLedger, {
          symbol: f.symbol,
          side: f.side,
          qty,
          quoteQty: new D(f.quote_qty),
          fee: new D(f.fee),
          feeAsset: f.fee_asset,
        });
        executed.set(f.order_id, (executed.get(f.order_id) ?? new D(0)).plus(qty));
      }
      const fromJournal = start();
      for (const f of journal.fills) {
        const qty = new D(f.qty);
        book(fromJournal, {
          symbol: f.symbol,
          side: f.side,
          qty,
          quoteQty: qty.mul(f.price),
          fee: new D(f.fee),
          feeAsset: journalFeeAsset(f),
        });
      }
      const lockedByOrders = new Map<string, Dec>();
      for (const o of ledger.orders) {
        if (!new D(o.executed_qty).eq(executed.get(o.id) ?? 0))
          problems.push(
            `paper order ${o.id} executed ${o.executed_qty}, its fills add up to ${executed.get(o.id)?.toFixed() ?? 0}`,
          );
        const open = o.status === 'NEW' || o.status === 'PARTIALLY_FILLED';
        if (!open && !new D(o.locked).isZero())
          problems.push(`paper order ${o.id} is ${o.status} but locks ${o.locked}`);
        const pair = PAIRS.get(o.symbol)!;
        const asset = o.side === 'BUY' ? pair.quote : pair.base;
        lockedByOrders.set(asset, (lockedByOrders.get(asset) ?? new D(0)).plus(o.locked));
      }
      for (const b of ledger.balances) {
        const total = new D(b.free).plus(b.locked);
        const zero = new D(0);
        if (!total.eq(fromLedger.get(b.asset) ?? zero))
          problems.push(
            `${b.asset}: balance ${total.toFixed()}, funding + ledger fills ${fromLedger.get(b.asset)?.toFixed()}`,
          );
        if (!total.eq(fromJournal.get(b.asset) ?? zero))
          problems.push(
            `${b.asset}: balance ${total.toFixed()}, funding + journal fills ${fromJournal.get(b.asset)?.toFixed()}`,
          );
        if (!new D(b.locked).eq(lockedByOrders.get(b.asset) ?? zero))
          problems.push(
            `${b.asset}: locked ${b.locked}, open orders hold ${lockedByOrders.get(b.asset)?.toFixed() ?? 0}`,
          );
        if (new D(b.free).lt(0) || new D(b.locked).lt(0))
          problems.push(`${b.asset}: negative balance ${b.free}/${b.locked}`);
      }
      return { problems, orders: ledger.orders.length, fills: ledger.fills.length };
    })();
  } finally {
    db.close();
  }
}

/** Waits until the journal in `db` agrees with its paper exchange's ledger (a failed wait quotes what disagrees). */
export function paperAuditSettled(what: string, db: string, daemon: DaemonProcess) {
  return waitFor(
    what,
    () => {
      const audit = auditPaperDb(db);
      // Thrown, so that a failed wait quotes what still disagrees.
      if (audit.problems.length > 0) throw new Error(audit.problems.join('; '));
      return audit;
    },
    { daemon },
  );
}
