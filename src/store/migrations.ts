/**
 * The schema, as an append-only list of migrations: a released migration is never edited, a change is a new
 * entry. Decimals are TEXT (exact, as the bot wrote them); times are epoch ms from the engine's Clock.
 */
import type { Database as Db } from 'better-sqlite3';
import { refoldPositions } from './positions.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
  /**
   * Data the SQL cannot derive (exact decimal folds), filled in after it, in the same transaction; it tells
   * `progress` how many of its rows it has done now and then (a large journal takes a while).
   */
  upgrade?: (db: Db, progress: (done: number, total: number) => void) => void;
}

/** An order's metric labels, from its row as OLD or NEW in a trigger ('' for an external order's instance). */
const orderKey = (row: 'OLD' | 'NEW') =>
  `ifnull(${row}.instance, ''), ${row}.symbol, ${row}.side, ${row}.type, ${row}.status, ${row}.exchange_id IS NOT NULL`;
const countOrder = (row: 'OLD' | 'NEW') =>
  `INSERT INTO order_counts (instance, symbol, side, type, status, placed, n) VALUES (${orderKey(row)}, 1) ` +
  'ON CONFLICT DO UPDATE SET n = n + 1;';
/** A paper order (its row or alias) is open on the simulated exchange: 1, else 0. */
const PAPER_OPEN = (row: string) => `${row}.status IN ('NEW', 'PARTIALLY_FILLED')`;
/** A paper order (OLD or NEW) counted in (+) or out (-) of its account's counts. */
const paperOrder = (row: 'OLD' | 'NEW', sign: '+' | '-') =>
  `UPDATE paper_counts SET orders = orders ${sign} 1, open_orders = open_orders ${sign} (${PAPER_OPEN(row)}) ` +
  `WHERE user_id = ${row}.user_id;`;
const uncountOrder = (row: 'OLD' | 'NEW') =>
  `UPDATE order_counts SET n = n - 1 WHERE (instance, symbol, side, type, status, placed) = (${orderKey(row)});`;

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'journal, fills, strategy state, events',
    sql: `
      CREATE TABLE orders (
        local_id      TEXT PRIMARY KEY,
        -- NULL for orders the bot did not place (adopted from the venue at start).
        instance      TEXT,
        seq           INTEGER,
        symbol        TEXT NOT NULL,
        side          TEXT NOT NULL CHECK (side IN ('BUY', 'SELL')),
        type          TEXT NOT NULL,
        price         TEXT,
        stop_price    TEXT,
        limit_price   TEXT,
        quantity      TEXT,
        quote_amount  TEXT,
        tag           TEXT,
        -- The journal's status: final only once every fill the venue reported is recorded.
        status        TEXT NOT NULL,
        -- The status the venue last reported, verbatim.
        venue_status  TEXT,
        exchange_id   TEXT UNIQUE,
        filled_qty    TEXT NOT NULL DEFAULT '0',
        avg_price     TEXT,
        -- What the venue last reported as executed; above filled_qty while fills are still to be recorded.
        exec_qty      TEXT NOT NULL DEFAULT '0',
        -- 'trades' or 'delta' (executedQty deltas) once the first fill is recorded; never mixed on one order.
        fill_source   TEXT,
        reject_code   TEXT,
        reject_reason TEXT,
        match_method  TEXT,
        external      INTEGER NOT NULL DEFAULT 0,
        created_at    INTEGER NOT NULL,
        sent_at       INTEGER,
        updated_at    INTEGER NOT NULL,
        UNIQUE (instance, seq)
      );
      CREATE INDEX orders_status ON orders (status);
      CREATE INDEX orders_instance ON orders (instance, status);

      CREATE TABLE fills (
        fill_key       TEXT PRIMARY KEY,
        order_local_id TEXT NOT NULL REFERENCES orders (local_id),
        instance       TEXT,
        symbol         TEXT NOT NULL,
        side           TEXT NOT NULL CHECK (side IN ('BUY', 'SELL')),
        price          TEXT NOT NULL,
        qty            TEXT NOT NULL,
        fee            TEXT NOT NULL,
        fee_asset      TEXT,
        -- Whether the fee was paid in the pair's base or quote asset (or another): positions need it.
        fee_in         TEXT NOT NULL CHECK (fee_in IN ('base', 'quote', 'other')),
        time           INTEGER NOT NULL,
        source         TEXT NOT NULL CHECK (source IN ('trade', 'delta')),
        delivered      INTEGER NOT NULL DEFAULT 0,
        recorded_at    INTEGER NOT NULL
      );
      CREATE INDEX fills_order ON fills (order_local_id);
      CREATE INDEX fills_instance ON fills (instance, delivered);
      CREATE INDEX fills_symbol_time ON fills (symbol, time);

      CREATE TABLE strategy_state (
        instance   TEXT PRIMARY KEY,
        state      TEXT NOT NULL,
        updated_at INTEGER NOT NULL
      );

      CREATE TABLE events (
        id       INTEGER PRIMARY KEY AUTOINCREMENT,
        time     INTEGER NOT NULL,
        instance TEXT,
        kind     TEXT NOT NULL,
        data     TEXT NOT NULL
      );
      CREATE INDEX events_instance ON events (instance, kind, id);
      CREATE INDEX events_time ON events (time);
    `,
  },
  {
    version: 2,
    name: 'last price per symbol',
    sql: `
      -- The last price the bot saw per symbol, so status can value open positions without the venue.
      CREATE TABLE last_prices (
        symbol      TEXT PRIMARY KEY,
        price       TEXT NOT NULL,
        -- The ticker's own time, and when the bot recorded it.
        time        INTEGER NOT NULL,
        recorded_at INTEGER NOT NULL
      );
    `,
  },
  {
    version: 3,
    name: 'the paper exchange ledger',
    sql: `
      -- The embedded simulated exchange's own state (paper trading), so a restart resumes the same paper
      -- account. Written by the simulated exchange alone, never in a transaction of the bot's journal: it is
      -- the exchange's book, which the journal is reconciled against as live is against the real exchange.
      CREATE TABLE paper_exchange (
        id          INTEGER PRIMARY KEY CHECK (id = 1),
        -- What moves its prices: 'recording' or 'live'.
        data        TEXT NOT NULL CHECK (data IN ('recording', 'live')),
        -- Paper on recorded data: where the replay stands (JSON), written with every change and now and then.
        replay      TEXT,
        created_at  INTEGER NOT NULL,
        updated_at  INTEGER NOT NULL
      );
      CREATE TABLE paper_accounts (
        user_id     INTEGER PRIMARY KEY,
        -- The starting balances by asset code (JSON), as funded.
        funding     TEXT NOT NULL,
        created_at  INTEGER NOT NULL
      );
      CREATE TABLE paper_balances (
        user_id     INTEGER NOT NULL REFERENCES paper_accounts (user_id),
        asset       TEXT NOT NULL,
        free        TEXT NOT NULL,
        locked      TEXT NOT NULL,
        PRIMARY KEY (user_id, asset)
      );
      CREATE TABLE paper_orders (
        id                 INTEGER PRIMARY KEY,
        user_id            INTEGER NOT NULL REFERENCES paper_accounts (user_id),
        symbol             TEXT NOT NULL,
        side               TEXT NOT NULL CHECK (side IN ('BUY', 'SELL')),
        type               TEXT NOT NULL,
        status             TEXT NOT NULL,
        quantity           TEXT NOT NULL,
        price              TEXT NOT NULL,
        stop_price         TEXT NOT NULL,
        limit_price        TEXT NOT NULL,
        quote_order_qty    TEXT,
        use_quote_qty      INTEGER NOT NULL,
        -- The armed stop and the limit in force (NULL when none), the OCO leg that went on.
        stop               TEXT,
        limit_in_force     TEXT,
        leg                TEXT,
        lock_per_unit      TEXT NOT NULL,
        locked             TEXT NOT NULL,
        executed_qty       TEXT NOT NULL,
        executed_quote_qty TEXT NOT NULL,
        fee                TEXT NOT NULL,
        fee_ratio          TEXT NOT NULL,
        created_at         INTEGER NOT NULL,
        updated_at         INTEGER NOT NULL
      );
      CREATE TABLE paper_fills (
        id         INTEGER PRIMARY KEY,
        order_id   INTEGER NOT NULL REFERENCES paper_orders (id),
        user_id    INTEGER NOT NULL REFERENCES paper_accounts (user_id),
        symbol     TEXT NOT NULL,
        side       TEXT NOT NULL CHECK (side IN ('BUY', 'SELL')),
        price      TEXT NOT NULL,
        base_qty   TEXT NOT NULL,
        quote_qty  TEXT NOT NULL,
        fee        TEXT NOT NULL,
        fee_asset  TEXT NOT NULL,
        fee_ratio  TEXT NOT NULL,
        maker      INTEGER NOT NULL,
        time       INTEGER NOT NULL
      );
      CREATE INDEX paper_fills_order ON paper_fills (order_id);
      -- Each pair's last price as the simulated exchange last saw it, with the whole ticker (JSON).
      CREATE TABLE paper_market (
        symbol  TEXT PRIMARY KEY,
        price   REAL NOT NULL,
        time    INTEGER NOT NULL,
        ticker  TEXT
      );
    `,
  },
  {
    version: 4,
    name: 'candles per symbol',
    sql: `
      -- Each symbol's candles as the engine last saved them (JSON: closed candles per timeframe, the forming
      -- ones, the last day's minute volumes), so a restart does not wait for the strategies' lookback again.
      CREATE TABLE candles (
        symbol      TEXT PRIMARY KEY,
        snapshot    TEXT NOT NULL,
        updated_at  INTEGER NOT NULL
      );
    `,
  },
  {
    version: 5,
    name: 'reads that stay fast as the journal grows',
    sql: `
      -- Status asks for the latest event of a kind (the last daemon start, kill switch, operator actions):
      -- found through this index at once rather than by scanning back through every event.
      CREATE INDEX events_kind ON events (kind, id);
      -- Today's fills of an instance.
      CREATE INDEX fills_instance_time ON fills (instance, time);

      -- Orders counted by the metrics' labels and fills totalled per instance, symbol and side, kept by
      -- triggers in the statement that writes the row (so they cannot disagree with the rows, even after a
      -- crash): a scrape reads these few rows instead of counting every order and fill. '' is no instance.
      CREATE TABLE order_counts (
        instance TEXT NOT NULL,
        symbol   TEXT NOT NULL,
        side     TEXT NOT NULL,
        type     TEXT NOT NULL,
        status   TEXT NOT NULL,
        placed   INTEGER NOT NULL,
        n        INTEGER NOT NULL,
        PRIMARY KEY (instance, symbol, side, type, status, placed)
      ) WITHOUT ROWID;
      INSERT INTO order_counts (instance, symbol, side, type, status, placed, n)
        SELECT ifnull(instance, ''), symbol, side, type, status, exchange_id IS NOT NULL, COUNT(*)
        FROM orders GROUP BY 1, 2, 3, 4, 5, 6;
      CREATE TRIGGER order_counts_insert AFTER INSERT ON orders BEGIN ${countOrder('NEW')} END;
      CREATE TRIGGER order_counts_update AFTER UPDATE ON orders
        WHEN (${orderKey('OLD')}) IS NOT (${orderKey('NEW')})
        BEGIN ${uncountOrder('OLD')} ${countOrder('NEW')} END;
      CREATE TRIGGER order_counts_delete AFTER DELETE ON orders BEGIN ${uncountOrder('OLD')} END;

      CREATE TABLE fill_totals (
        instance TEXT NOT NULL,
        symbol   TEXT NOT NULL,
        side     TEXT NOT NULL,
        n        INTEGER NOT NULL,
        -- Sum of price x quantity in the quote currency, as a double: a metric (the exact figures are the rows).
        notional REAL NOT NULL,
        PRIMARY KEY (instance, symbol, side)
      ) WITHOUT ROWID;
      INSERT INTO fill_totals (instance, symbol, side, n, notional)
        SELECT ifnull(instance, ''), symbol, side, COUNT(*), SUM(CAST(price AS REAL) * CAST(qty AS REAL))
        FROM fills GROUP BY 1, 2, 3;
      CREATE TRIGGER fill_totals_insert AFTER INSERT ON fills BEGIN
        INSERT INTO fill_totals (instance, symbol, side, n, notional)
          VALUES (ifnull(NEW.instance, ''), NEW.symbol, NEW.side, 1, CAST(NEW.price AS REAL) * CAST(NEW.qty AS REAL))
          ON CONFLICT DO UPDATE SET n = n + 1, notional = notional + excluded.notional;
      END;
      -- Fills are a ledger: the folds below cannot be unwound, so a fill row is never deleted or changed
      -- (only its delivery flag).
      CREATE TRIGGER fills_append_only_delete BEFORE DELETE ON fills
        BEGIN SELECT RAISE(ABORT, 'fills are append-only'); END;
      CREATE TRIGGER fills_append_only_update BEFORE UPDATE OF fill_key, instance, symbol, side, price, qty, fee, fee_in, time ON fills
        BEGIN SELECT RAISE(ABORT, 'fills are append-only'); END;

      -- Each instance's position folded from its fills in recording order (store/positions.ts), exact decimal
      -- text, written in the fill's own transaction; fill_seq is the row number of the last fill folded in.
      CREATE TABLE positions (
        instance  TEXT PRIMARY KEY,
        fill_seq  INTEGER NOT NULL,
        quantity  TEXT NOT NULL,
        cost      TEXT NOT NULL,
        realised  TEXT NOT NULL
      );
      -- Realised PnL per instance and UTC day (days since the epoch), from the same fold.
      CREATE TABLE realised_days (
        instance  TEXT NOT NULL,
        day       INTEGER NOT NULL,
        realised  TEXT NOT NULL,
        PRIMARY KEY (instance, day)
      ) WITHOUT ROWID;

      -- The paper account's orders, open orders and fills counted as the simulated exchange writes them.
      CREATE TABLE paper_counts (
        user_id      INTEGER PRIMARY KEY REFERENCES paper_accounts (user_id),
        orders       INTEGER NOT NULL,
        open_orders  INTEGER NOT NULL,
        fills        INTEGER NOT NULL
      );
      INSERT INTO paper_counts (user_id, orders, open_orders, fills)
        SELECT user_id,
          (SELECT COUNT(*) FROM paper_orders o WHERE o.user_id = a.user_id),
          (SELECT COUNT(*) FROM paper_orders o WHERE o.user_id = a.user_id AND ${PAPER_OPEN('o')}),
          (SELECT COUNT(*) FROM paper_fills f WHERE f.user_id = a.user_id)
        FROM paper_accounts a;
      CREATE TRIGGER paper_counts_account AFTER INSERT ON paper_accounts BEGIN
        INSERT INTO paper_counts (user_id, orders, open_orders, fills) VALUES (NEW.user_id, 0, 0, 0) ON CONFLICT DO NOTHING;
      END;
      CREATE TRIGGER paper_counts_order_insert AFTER INSERT ON paper_orders BEGIN ${paperOrder('NEW', '+')} END;
      CREATE TRIGGER paper_counts_order_update AFTER UPDATE ON paper_orders
        BEGIN ${paperOrder('OLD', '-')} ${paperOrder('NEW', '+')} END;
      CREATE TRIGGER paper_counts_order_delete AFTER DELETE ON paper_orders BEGIN ${paperOrder('OLD', '-')} END;
      CREATE TRIGGER paper_counts_fill_insert AFTER INSERT ON paper_fills BEGIN
        UPDATE paper_counts SET fills = fills + 1 WHERE user_id = NEW.user_id;
      END;
      CREATE TRIGGER paper_counts_fill_delete AFTER DELETE ON paper_fills BEGIN
        UPDATE paper_counts SET fills = fills - 1 WHERE user_id = OLD.user_id;
      END;
    `,
    upgrade: refoldPositions,
  },
  {
    version: 6,
    name: 'pair rules for display',
    sql: `
      -- Each traded pair's configuration (JSON) as the venue last gave the daemon: \`bot status\` and the
      -- notifications round prices and quantities to its tick and step (store/pair-rules.ts).
      CREATE TABLE pair_rules (
        symbol      TEXT PRIMARY KEY,
        config      TEXT NOT NULL,
        updated_at  INTEGER NOT NULL
      );
    `,
  },
  {
    version: 7,
    name: 'the entry an order closes',
    sql: `
      -- The tag of the entry order an order closes, as the strategy named it: closed trades pair by it.
      ALTER TABLE orders ADD COLUMN closes TEXT;
    `,
  },
  {
    version: 8,
    name: "an order's time on the venue's clock",
    sql: `
      -- When the venue created the order, on its own clock (its record's createdAt): history reads about the
      -- order start there, so they find it whatever this machine's clock says (a clock stepped forward).
      ALTER TABLE orders ADD COLUMN venue_created_at INTEGER;
    `,
  },
  {
    version: 9,
    name: 'the journal lease',
    sql: `
      -- Who uses the journal, and their heartbeat (store/journal-lease.ts): one row, read by any daemon that
      -- opens the file, whatever path, link or mount it came through. IF NOT EXISTS: journals of the days
      -- before this migration had it made outside the migrations.
      CREATE TABLE IF NOT EXISTS journal_lease (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        token TEXT NOT NULL,
        pid INTEGER NOT NULL,
        host TEXT NOT NULL,
        container TEXT,
        since TEXT NOT NULL,
        heartbeat INTEGER NOT NULL,
        ttl_ms INTEGER NOT NULL
      );
    `,
  },
  {
    version: 10,
    name: "the paper exchange's history read on demand",
    sql: `
      -- The simulated exchange keeps its open orders in memory and reads its history from here a page at a time
      -- (store/paper-exchange.ts): its open orders at a resume, and each page since a time, without reading
      -- every order and fill the account ever had; the pairs it has orders on, from an index.
      CREATE INDEX paper_orders_open ON paper_orders (status) WHERE status IN ('NEW', 'PARTIALLY_FILLED');
      CREATE INDEX paper_orders_time ON paper_orders (created_at);
      CREATE INDEX paper_orders_symbol ON paper_orders (symbol);
      CREATE INDEX paper_fills_time ON paper_fills (time);
    `,
  },
];

export const LATEST_VERSION = MIGRATIONS.reduce((v, m) => Math.max(v, m.version), 0);
