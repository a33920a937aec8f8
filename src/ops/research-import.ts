/**
 * The research dependencies: Arrow and the Parquet writer (`bot data export`), BullMQ and its ioredis (a sweep's
 * `--queue`, `bot worker`). A checkout and the image's research target have them; the trading image leaves them
 * out (the daemon never loads them). A command that needs one imports it through `researchImport`, so that where it
 * is missing the user reads which package, for what, and where it is, rather than Node's ERR_MODULE_NOT_FOUND.
 */
import { BotError } from '../errors.js';

export const RESEARCH_PACKAGES = ['apache-arrow', 'hyparquet-writer', 'bullmq', 'ioredis'] as const;
export type ResearchPackage = (typeof RESEARCH_PACKAGES)[number];

/** The package `err` says could not be found, when it is a research package. */
function missingPackage(err: unknown): ResearchPackage | undefined {
  if (!(err instanceof Error) || (err as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') return undefined;
  return RESEARCH_PACKAGES.find((p) => err.message.includes(`'${p}'`));
}

/** `load()` (an import of a research package, or of a module importing one), or an E_UNSUPPORTED naming `what`. */
export async function researchImport<T>(what: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    const pkg = missingPackage(err);
    if (pkg === undefined) throw err;
    throw new BotError(
      'E_UNSUPPORTED',
      `${what} needs ${pkg}, which this installation leaves out (the trading image carries only what the daemon ` +
        `runs): use the research image (docker build --target research; compose's worker service) or a checkout ` +
        `with npm ci`,
      { cause: err },
    );
  }
}
