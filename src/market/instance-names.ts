/**
 * How instances are named: a strategy file of one pair is one instance under the file's name; a file of several
 * pairs makes one per pair, `<file>/<SYMBOL>`, shown together under the file's name (its group). A file's name
 * holds no '/', so the name alone says which group an instance is of, wherever it is read (the journal too).
 */

/** The name of a file's instance on `symbol` when the file trades several pairs. */
export function pairInstanceName(group: string, symbol: string): string {
  return `${group}/${symbol}`;
}

/** The group (the multi-pair file) and pair of an instance named by pairInstanceName; undefined for any other. */
export function instanceGroup(instance: string): { group: string; symbol: string } | undefined {
  const at = instance.indexOf('/');
  return at <= 0 ? undefined : { group: instance.slice(0, at), symbol: instance.slice(at + 1) };
}
