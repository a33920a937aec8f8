/**
 * Output folders never overwrite another run's silently. Each folder a backtest or a sweep writes holds a
 * marker (OUTPUT_MARKER) with what wrote it (`run` or `sweep`) and a short hash of its inputs; the default
 * folder name carries the same hash. A folder that holds other inputs' outputs is refused unless --force, a
 * folder with files but no marker likewise, and a sweep never writes into a single run's folder (nor a run
 * into a sweep's), --force or not.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { BotError } from '../errors.js';

export const OUTPUT_MARKER = '.spot-bot-output.json';

export type OutputKind = 'run' | 'sweep' | 'hyperopt';

/** The first 10 hex digits of the sha256 of the inputs (any JSON value; the caller keeps its key order stable). */
export function inputsHash(inputs: unknown): string {
  return createHash('sha256').update(JSON.stringify(inputs)).digest('hex').slice(0, 10);
}

function refuse(message: string): BotError {
  return new BotError('E_OUTPUT_EXISTS', message);
}

/**
 * Makes `dir` this output's folder: creates it, or checks that what it holds was written by the same kind of
 * output from the same inputs (`force` lets other inputs' outputs be overwritten), then writes the marker.
 */
export async function claimOutputFolder(dir: string, kind: OutputKind, hash: string, force: boolean): Promise<void> {
  const entries = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    throw refuse(`${dir}: cannot use as the output folder (${err.code ?? err.message})`);
  });
  if (entries.length > 0) {
    const marker = await readFile(path.join(dir, OUTPUT_MARKER), 'utf8')
      .then((text) => JSON.parse(text) as { kind?: unknown; inputs?: unknown })
      .catch(() => undefined);
    if (marker === undefined) {
      if (!force)
        throw refuse(
          `${dir} already holds files that no backtest wrote; choose another --out, or --force to write there anyway`,
        );
    } else if (marker.kind !== kind) {
      throw refuse(
        `${dir} holds a ${String(marker.kind)}'s outputs: a ${kind} never writes into it (choose another --out)`,
      );
    } else if (marker.inputs !== hash && !force) {
      throw refuse(
        `${dir} holds the outputs of other inputs (${String(marker.inputs)}, these are ${hash}); ` +
          'choose another --out, or --force to replace them',
      );
    }
  }
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, OUTPUT_MARKER), `${JSON.stringify({ kind, inputs: hash })}\n`);
}
