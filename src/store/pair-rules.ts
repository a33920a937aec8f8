/**
 * Each traded pair's configuration as the venue last gave the daemon (one row each, overwritten when it
 * changes), so a process without the venue (`bot status`, the notifier, the daily summary) rounds what it shows
 * to the pair's tick and step as the daemon's control API does.
 */
import { type PairConfigFields, type PairRules, pairRulesFrom } from '../market/pair-rules.js';
import type { Database as Db } from 'better-sqlite3';

export class PairRulesStore {
  private readonly db: Db;
  private readonly putStmt;
  private readonly getStmt;
  /** Rules parsed per symbol, kept while the stored text is the same. */
  private readonly parsed = new Map<string, { text: string; rules: PairRules | undefined }>();
  /**
   * Per symbol, the frozen configuration object last written and committed: a venue that hands the same frozen
   * object again (the in-process venue's configs never change) costs no serialising and no statement.
   */
  private readonly written = new Map<string, PairConfigFields>();

  constructor(db: Db) {
    this.db = db;
    this.putStmt = db.prepare<[string, string, number]>(
      'INSERT INTO pair_rules (symbol, config, updated_at) VALUES (?, ?, ?) ' +
        'ON CONFLICT (symbol) DO UPDATE SET config = excluded.config, updated_at = excluded.updated_at ' +
        'WHERE pair_rules.config IS NOT excluded.config',
    );
    this.getStmt = db.prepare<[string], string | undefined>('SELECT config FROM pair_rules WHERE symbol = ?').pluck();
  }

  /** Keeps each pair's configuration (written only where it changed). */
  put(configs: readonly PairConfigFields[], time: number): void {
    for (const c of configs) {
      if (this.written.get(c.symbol) === c) continue;
      this.putStmt.run(c.symbol, JSON.stringify(c), time);
      // Only a write committed on its own is known to stay (one inside a transaction may yet be rolled back).
      if (Object.isFrozen(c) && !this.db.inTransaction) this.written.set(c.symbol, c);
      else this.written.delete(c.symbol);
    }
  }

  /** A pair's rules as last stored, or undefined (never stored, or a configuration that no longer reads). */
  get(symbol: string): PairRules | undefined {
    const text = this.getStmt.get(symbol);
    if (text === undefined) return undefined;
    const known = this.parsed.get(symbol);
    if (known?.text === text) return known.rules;
    let rules: PairRules | undefined;
    try {
      rules = pairRulesFrom(JSON.parse(text) as PairConfigFields);
    } catch {
      rules = undefined;
    }
    this.parsed.set(symbol, { text, rules });
    return rules;
  }
}
