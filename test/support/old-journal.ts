/**
 * A journal as an older version of the bot left it: the migrations up to `schema` applied (their SQL and data
 * upgrades, as that version ran them), holding `fills` filled orders of one instance, one fill each, delivered;
 * on paper also the simulated exchange's ledger of as many orders and fills (its tables came with schema 3), so
 * the paper account resumes. The container test's upgrade, the journal upgrade tests and
 * bench/journal-startup.ts start daemons on it.
 */
import Database from 'better-sqlite3';
import { MIGRATIONS } from '../../src/store/migrations.js';

export interface OldJournal {
  fills: number;
  schema: number;
  venue: 'live' | 'paper';
  /** The instance the orders and fills belong to (default grid-btcusdt, the shipped strategy file's). */
  instance?: string;
}

/** Orders are a minute apart from here, before the shipped samples begin (a paper replay goes on after them). */
const FIRST = Date.parse('2022-01-01T00:00:00Z');

export function writeOldJournal(path: string, options: OldJournal): void {
  const { fills, schema, venue, instance = 'grid-btcusdt' } = options;
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec(
    'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)',
  );
  for (const m of MIGRATIONS.filter((m) => m.version <= schema)) {
    db.exec(m.sql);
    m.upgrade?.(db, () => undefined);
    db.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(m.version, m.name, FIRST);
  }
  const order = db.prepare(
    `INSERT INTO orders (local_id, instance, seq, symbol, side, type, price, quantity, status, venue_status,
       exchange_id, filled_qty, avg_price, exec_qty, fill_source, created_at, sent_at, updated_at)
     VALUES (?, ?, ?, 'BTCUSDT', ?, 'LIMIT', ?, '0.001', 'FILLED', 'FILLED', ?, '0.001', ?, '0.001', 'trades', ?, ?, ?)`,
  );
  const fill = db.prepare(
    `INSERT INTO fills (fill_key, order_local_id, instance, symbol, side, price, qty, fee, fee_asset, fee_in, time,
       source, delivered, recorded_at)
     VALUES (?, ?, ?, 'BTCUSDT', ?, ?, '0.001', '0.02', 'USDT', 'quote', ?, 'trade', 1, ?)`,
  );
  const paperOrder = db.prepare(
    `INSERT INTO paper_orders (id, user_id, symbol, side, type, status, quantity, price, stop_price, limit_price,
       quote_order_qty, use_quote_qty, stop, limit_in_force, leg, lock_per_unit, locked, executed_qty,
       executed_quote_qty, fee, fee_ratio, created_at, updated_at)
     VALUES (?, 1, 'BTCUSDT', ?, 'LIMIT', 'FILLED', '0.001', ?, '0', '0', NULL, 0, NULL, NULL, NULL, '0', '0',
       '0.001', ?, '0.02', '0.001', ?, ?)`,
  );
  const paperFill = db.prepare(
    `INSERT INTO paper_fills (id, order_id, user_id, symbol, side, price, base_qty, quote_qty, fee, fee_asset,
       fee_ratio, maker, time)
     VALUES (?, ?, 1, 'BTCUSDT', ?, ?, '0.001', ?, '0.02', 'USDT', '0.001', 1, ?)`,
  );
  db.transaction(() => {
    if (venue === 'paper') {
      db.prepare("INSERT INTO paper_exchange VALUES (1, 'recording', NULL, ?, ?)").run(FIRST, FIRST);
      db.prepare('INSERT INTO paper_accounts VALUES (1, ?, ?)').run(
        JSON.stringify({ USDT: '10000', BTC: '0.5' }),
        FIRST,
      );
      db.prepare("INSERT INTO paper_balances VALUES (1, 'USDT', '10000', '0'), (1, 'BTC', '0.5', '0')").run();
    }
    for (let i = 0; i < fills; i++) {
      // Alternate BUYs and SELLs of 0.001 a little apart: the position stays flat, some PnL is realised.
      const side = i % 2 === 0 ? 'BUY' : 'SELL';
      const price = (20_000 + (i % 2) * 60 + (i % 97)).toFixed(2);
      const quote = (Number(price) * 0.001).toFixed(8);
      const t = FIRST + i * 60_000;
      order.run(`${instance}-${i + 1}`, instance, i + 1, side, price, String(i + 1), price, t, t, t);
      fill.run(`t${i + 1}`, `${instance}-${i + 1}`, instance, side, price, t, t);
      if (venue === 'paper') {
        paperOrder.run(i + 1, side, price, quote, t, t);
        paperFill.run(i + 1, i + 1, side, price, quote, t);
      }
    }
    const started = { mode: venue, venue: venue === 'paper' ? 'embedded' : 'http://127.0.0.1', pid: 1 };
    db.prepare("INSERT INTO events (time, instance, kind, data) VALUES (?, NULL, 'daemon-started', ?)").run(
      FIRST,
      JSON.stringify(started),
    );
  })();
  db.close();
}
