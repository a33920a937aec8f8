/**
 * One place that maps a table's rows to the objects the bot uses: camelCase fields, `undefined` for NULL,
 * booleans for 0/1 flags. A table module declares its field → column map once (every field must have one)
 * and gets the column list, the named parameters and both conversions from it.
 */
export interface ColumnMapper<Row extends object> {
  /** `a, b, c` for SELECT and INSERT. */
  columns: string;
  /** `@a, @b, @c` for INSERT … VALUES. */
  params: string;
  /** `?, ?, ?` for INSERT … VALUES bound by position (`values()`). */
  marks: string;
  toDb(row: Row): Record<string, unknown>;
  fromDb(record: Record<string, unknown>): Row;
  /** The column of a field. */
  column(field: keyof Row & string): string;
  /**
   * A row's values for `fields` (default: every column, in `columns` order), in that order, converted as toDb
   * does: what a statement's `?` parameters take. Binding by position spares building an object of every column
   * and looking each parameter up by name in it (the journal's writes on every order's and fill's path).
   */
  values(fields?: readonly (keyof Row & string)[]): (row: Row) => unknown[];
}

export function columnMapper<Row extends object>(
  fields: Record<keyof Row & string, string>,
  flags: readonly (keyof Row & string)[] = [],
): ColumnMapper<Row> {
  const entries = Object.entries(fields) as [keyof Row & string, string][];
  const isFlag = new Set<string>(flags);
  return {
    columns: entries.map(([, column]) => column).join(', '),
    params: entries.map(([, column]) => `@${column}`).join(', '),
    marks: entries.map(() => '?').join(', '),
    toDb(row) {
      const out: Record<string, unknown> = {};
      for (const [field, column] of entries) {
        const value: unknown = row[field];
        out[column] = isFlag.has(field) ? (value ? 1 : 0) : (value ?? null);
      }
      return out;
    },
    fromDb(record) {
      const out: Record<string, unknown> = {};
      for (const [field, column] of entries) {
        const value = record[column];
        out[field] = isFlag.has(field) ? value === 1 : (value ?? undefined);
      }
      return out as Row;
    },
    column(field) {
      return fields[field];
    },
    values(wanted = entries.map(([field]) => field)) {
      const flagged = wanted.map((field) => isFlag.has(field));
      return (row) => {
        const out: unknown[] = new Array(wanted.length);
        for (let i = 0; i < wanted.length; i++) {
          const value: unknown = row[wanted[i]!];
          out[i] = flagged[i] ? (value ? 1 : 0) : (value ?? null);
        }
        return out;
      };
    },
  };
}

/**
 * SQL for the distinct non-NULL values of an indexed column, sorted, in one index seek per value (a recursive
 * skip over the index) rather than a scan of every row: `column` must lead an index of `table`.
 */
export function distinctThroughIndex(table: string, column: string): string {
  return (
    `WITH RECURSIVE v(${column}) AS (SELECT MIN(${column}) FROM ${table} WHERE ${column} IS NOT NULL ` +
    `UNION ALL SELECT (SELECT MIN(${column}) FROM ${table} WHERE ${column} > v.${column}) FROM v WHERE v.${column} IS NOT NULL) ` +
    `SELECT ${column} FROM v WHERE ${column} IS NOT NULL`
  );
}
