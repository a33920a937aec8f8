/**
 * A CSV file a run wrote (a header line, then one line per row) as records by column name. The tests' runs write
 * no cell that needs quoting (no comma, quote or line break), so a line splits on its commas.
 */
import { readFileSync } from 'node:fs';

export function csvRecords(file: string): Record<string, string>[] {
  const [header, ...lines] = readFileSync(file, 'utf8').trim().split('\n');
  const keys = header!.split(',');
  return lines.map((line): Record<string, string> => {
    const values = line.split(',');
    return Object.fromEntries(keys.map((k, i): [string, string] => [k, values[i] ?? '']));
  });
}
