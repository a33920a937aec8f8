/** Per-instance strategy state, persisted as JSON text so a restart resumes where the strategy left off. */
import type { Database as Db } from 'better-sqlite3';

export class StrategyStateStore {
  private readonly getStmt;
  private readonly putStmt;

  constructor(db: Db) {
    this.getStmt = db.prepare<[string], { state: string }>('SELECT state FROM strategy_state WHERE instance = ?');
    this.putStmt = db.prepare<[string, string, number]>(
      'INSERT INTO strategy_state (instance, state, updated_at) VALUES (?, ?, ?) ' +
        'ON CONFLICT (instance) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at',
    );
  }

  /** The saved JSON text, or undefined when the instance never saved any. */
  get(instance: string): string | undefined {
    return this.getStmt.get(instance)?.state;
  }

  put(instance: string, json: string, time: number): void {
    this.putStmt.run(instance, json, time);
  }
}
