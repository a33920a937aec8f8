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
  toDb(row: Row): Record<string, unknown>;
  fromDb(record: Record<string, unknown>): Row;
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
