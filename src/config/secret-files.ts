/**
 * Secrets from files (Docker and Kubernetes secrets): a secret variable NAME may instead be given as NAME_FILE,
 * the path of a file holding the value. Problems name the variable and the file, never what the file holds.
 */
import { readFileSync } from 'node:fs';

export interface SecretFiles {
  /** The values read, by variable name (NAME, not NAME_FILE). */
  values: Record<string, string>;
  /** One line per problem, each starting with the NAME_FILE variable. */
  problems: string[];
  /** The variables whose file could not be used (their other problems would only repeat this one). */
  failed: Set<string>;
}

const given = (v: string | undefined): v is string => v !== undefined && v !== '';

/** Reads NAME_FILE for each of `names` that has one; the trailing newlines editors and `echo` leave are dropped. */
export function readSecretFiles(
  source: Readonly<Record<string, string | undefined>>,
  names: readonly string[],
): SecretFiles {
  const result: SecretFiles = { values: {}, problems: [], failed: new Set() };
  for (const name of names) {
    const fileVariable = `${name}_FILE`;
    const path = source[fileVariable];
    if (!given(path)) continue;
    const fail = (problem: string) => {
      result.problems.push(`${fileVariable}: ${problem}`);
      result.failed.add(name);
    };
    if (given(source[name])) {
      fail(`set either ${name} or ${fileVariable}, not both`);
      continue;
    }
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      fail(`cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`);
      continue;
    }
    const value = text.replace(/[\r\n]+$/, '');
    if (value === '') fail(`${path} is empty`);
    else result.values[name] = value;
  }
  return result;
}
