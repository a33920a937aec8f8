/**
 * The secrets scan: the API secret, every request signature the proxy saw and the API token must appear in
 * none of a run's outputs (stdout, stderr, log files, reports, the database and its WAL).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

export interface Haystack {
  name: string;
  text: string;
}

/** Every file under `dir`, read as bytes (latin1, so a secret inside binary SQLite pages is still found). */
export function runFiles(dir: string): Haystack[] {
  const out: Haystack[] = [];
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const path = join(dir, name);
    if (statSync(path).isFile()) out.push({ name: path, text: readFileSync(path).toString('latin1') });
  }
  return out;
}

/** Where any of the secrets appears: `what in where` lines, empty when none does. Signatures are 64 hex digits. */
export function findSecrets(
  haystacks: readonly Haystack[],
  secrets: readonly string[],
  signatures: ReadonlySet<string>,
): string[] {
  const found: string[] = [];
  for (const { name, text } of haystacks) {
    for (const s of secrets) if (text.includes(s)) found.push(`a secret (${s.slice(0, 4)}…) in ${name}`);
    for (const hex of text.match(/[0-9a-f]{64}/g) ?? [])
      if (signatures.has(hex)) found.push(`a request signature in ${name}`);
  }
  return found;
}
