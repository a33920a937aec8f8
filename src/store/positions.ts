/**
 * Each instance's position folded from its fills as they are recorded (quantity, cost, realised PnL, and the
 * realised PnL of each UTC day), so `status`, the API and the metrics read one row instead of re-reading every
 * fill. The fill store writes it in the same transaction as the fill, so it never disagrees with the fills: the
 * same fold over the same rows in the same order (market/position.ts), kept as exact decimal text.
 */
import { D, type Dec, plain, ZERO } from '../market/decimal.js';
import { type FillFigures, positionFill, PositionTracker, utcDay } from '../market/position.js';
import type { Database as Db } from 'better-sqlite3';

interface DbPosition {
  quantity: string;
  cost: string;
  realised: string;
}

/** An instance's fold as this object last wrote it, and the row number of the fill it ends on. */
interface Folded {
  seq: number;
  tracker: PositionTracker;
  day: number;
  dayRealised: Dec;
}

export class PositionFolds {
  /**
   * Each instance's fold as last written here, so the next fill folds on from memory instead of reading the row
   * and its day back and parsing them. The row's fill_seq says whether the table still holds it (a transaction
   * that rolled back since would have put back an earlier one): one integer read, checked before each use.
   */
  private readonly folded = new Map<string, Folded>();
  private readonly seqStmt;
  private readonly getStmt;
  private readonly putStmt;
  private readonly dayStmt;
  private readonly putDayStmt;
  private readonly daysStmt;

  constructor(db: Db) {
    this.seqStmt = db.prepare<[string], number>('SELECT fill_seq FROM positions WHERE instance = ?').pluck();
    this.getStmt = db.prepare<[string], DbPosition>(
      'SELECT quantity, cost, realised FROM positions WHERE instance = ?',
    );
    this.putStmt = db.prepare<[string, number, string, string, string]>(
      'INSERT INTO positions (instance, fill_seq, quantity, cost, realised) VALUES (?, ?, ?, ?, ?) ' +
        'ON CONFLICT (instance) DO UPDATE SET fill_seq = excluded.fill_seq, quantity = excluded.quantity, ' +
        'cost = excluded.cost, realised = excluded.realised',
    );
    this.dayStmt = db.prepare<[string, number], { realised: string }>(
      'SELECT realised FROM realised_days WHERE instance = ? AND day = ?',
    );
    this.daysStmt = db.prepare<[string], { day: number; realised: string }>(
      'SELECT day, realised FROM realised_days WHERE instance = ?',
    );
    this.putDayStmt = db.prepare<[string, number, string]>(
      'INSERT INTO realised_days (instance, day, realised) VALUES (?, ?, ?) ' +
        'ON CONFLICT (instance, day) DO UPDATE SET realised = excluded.realised',
    );
  }

  /** The instance's position as folded so far (a fresh tracker when it has no fills). */
  tracker(instance: string): PositionTracker {
    const row = this.getStmt.get(instance);
    if (row === undefined) return new PositionTracker();
    return PositionTracker.resume({
      quantity: new D(row.quantity),
      cost: new D(row.cost),
      realised: new D(row.realised),
    });
  }

  /**
   * The instance's fold with the realised PnL of each day: what the engine resumes from at start, one row and its
   * days where folding every fill again grew with the journal (300,000 fills: seconds of a blocked start).
   */
  resumed(instance: string): PositionTracker {
    const row = this.getStmt.get(instance);
    if (row === undefined) return new PositionTracker();
    const days = new Map(this.daysStmt.all(instance).map((d) => [d.day, new D(d.realised)]));
    return PositionTracker.resume(
      { quantity: new D(row.quantity), cost: new D(row.cost), realised: new D(row.realised) },
      days,
    );
  }

  /** Realised PnL of the instance's fills whose time falls on the UTC day (decimal text, '0' when none). */
  realisedOn(instance: string, day: number): string {
    return this.dayStmt.get(instance, day)?.realised ?? '0';
  }

  /** Folds one newly recorded fill in (`seq`: its row number). Call inside the fill's own transaction. */
  apply(instance: string, fill: FillFigures, seq: number): void {
    let kept = this.folded.get(instance);
    // Taken out until this fill's fold is written: a fold that fails half-way is read back from the table.
    this.folded.delete(instance);
    if (kept !== undefined && this.seqStmt.get(instance) !== kept.seq) kept = undefined;
    const tracker = kept?.tracker ?? this.tracker(instance);
    const realised = tracker.apply(positionFill(fill));
    const day = utcDay(fill.time);
    const before = kept !== undefined && kept.day === day ? kept.dayRealised : new D(this.realisedOn(instance, day));
    const dayRealised = before.plus(realised);
    this.write(instance, seq, tracker, new Map([[day, dayRealised]]));
    this.folded.set(instance, { seq, tracker, day, dayRealised });
  }

  /** Stores the fold and the given days' realised PnL. */
  write(instance: string, seq: number, tracker: PositionTracker, days: ReadonlyMap<number, Dec>): void {
    this.folded.delete(instance);
    const { quantity, cost, realised } = tracker.book;
    this.putStmt.run(instance, seq, plain(quantity), plain(cost), plain(realised));
    for (const [day, value] of days) this.putDayStmt.run(instance, day, plain(value));
  }
}

/** Rows between two progress reports of a refold. */
const REFOLD_REPORT_EVERY = 10_000;

/**
 * Folds every recorded fill again from nothing (a journal written before the folds existed): one pass, telling
 * `progress` how many fills it has folded every 10,000.
 */
export function refoldPositions(db: Db, progress: (done: number, total: number) => void = () => undefined): void {
  db.exec('DELETE FROM positions; DELETE FROM realised_days;');
  const total = db.prepare('SELECT COUNT(*) FROM fills WHERE instance IS NOT NULL').pluck().get() as number;
  let done = 0;
  const folds = new Map<string, { tracker: PositionTracker; seq: number; days: Map<number, Dec> }>();
  const rows = db
    .prepare<[], FillFigures & { instance: string; seq: number }>(
      'SELECT rowid AS seq, instance, side, price, qty, fee, fee_in AS feeIn, time FROM fills ' +
        'WHERE instance IS NOT NULL ORDER BY rowid',
    )
    .iterate();
  for (const row of rows) {
    let fold = folds.get(row.instance);
    if (fold === undefined)
      folds.set(row.instance, (fold = { tracker: new PositionTracker(), seq: 0, days: new Map() }));
    const realised = fold.tracker.apply(positionFill(row));
    const day = utcDay(row.time);
    fold.days.set(day, (fold.days.get(day) ?? ZERO).plus(realised));
    fold.seq = row.seq;
    if (++done % REFOLD_REPORT_EVERY === 0) progress(done, total);
  }
  progress(done, total);
  const put = new PositionFolds(db);
  for (const [instance, fold] of folds) put.write(instance, fold.seq, fold.tracker, fold.days);
}
