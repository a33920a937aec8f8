/**
 * The schema, as an append-only list of migrations: a released migration is never edited, a change is a new
 * entry. Decimals are TEXT (exact, as the bot wrote them); times are epoch ms from the engine's Clock.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

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
];

export const LATEST_VERSION = MIGRATIONS.reduce((v, m) => Math.max(v, m.version), 0);
