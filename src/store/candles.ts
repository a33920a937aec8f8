/** Each symbol's candles as the engine last saved them (JSON text), one row per symbol, overwritten. */
import type { Database as Db } from 'better-sqlite3';

export class CandleStore {
  private readonly getStmt;
  private readonly putStmt;

  constructor(db: Db) {
    this.getStmt = db.prepare<[string], { snapshot: string }>('SELECT snapshot FROM candles WHERE symbol = ?');
    this.putStmt = db.prepare<[string, string, number]>(
      'INSERT INTO candles (symbol, snapshot, updated_at) VALUES (?, ?, ?) ' +
        'ON CONFLICT (symbol) DO UPDATE SET snapshot = excluded.snapshot, updated_at = excluded.updated_at',
    );
  }

  get(symbol: string): string | undefined {
    return this.getStmt.get(symbol)?.snapshot;
  }

  put(symbol: string, snapshot: string, time: number): void {
    this.putStmt.run(symbol, snapshot, time);
  }
}
