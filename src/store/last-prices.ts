/** The last price seen per symbol (one row each, overwritten): what `status` values open positions at. */
import type { Database as Db } from 'better-sqlite3';

export interface LastPrice {
  symbol: string;
  /** Plain decimal text, as the ticker gave it. */
  price: string;
  /** The ticker's time (epoch ms). */
  time: number;
}

export class LastPrices {
  private readonly putStmt;
  private readonly allStmt;
  private readonly writtenStmt;

  constructor(db: Db) {
    this.putStmt = db.prepare<[string, string, number, number]>(
      'INSERT INTO last_prices (symbol, price, time, recorded_at) VALUES (?, ?, ?, ?) ' +
        'ON CONFLICT (symbol) DO UPDATE SET price = excluded.price, time = excluded.time, ' +
        'recorded_at = excluded.recorded_at WHERE excluded.time >= last_prices.time',
    );
    this.allStmt = db.prepare<[], LastPrice>('SELECT symbol, price, time FROM last_prices ORDER BY symbol');
    this.writtenStmt = db.prepare<[], number | null>('SELECT MAX(recorded_at) FROM last_prices').pluck();
  }

  /** When prices were last written, in the writer's clock (the venue's time: the daemon's clock), if ever. */
  lastWritten(): number | undefined {
    return this.writtenStmt.get() ?? undefined;
  }

  /** Keeps the newer of the stored and the given price (by ticker time). */
  put(price: LastPrice, recordedAt: number): void {
    this.putStmt.run(price.symbol, price.price, price.time, recordedAt);
  }

  all(): LastPrice[] {
    return this.allStmt.all();
  }
}
