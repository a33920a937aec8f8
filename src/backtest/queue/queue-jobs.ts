/**
 * What travels on the queue: one job per sweep combination, naming everything it runs on by content. A job
 * carries the sweep's spec (strategy files as JSON, the sha256 of their modules, the settings, the recordings
 * by sha256 with where to read them) and its combination (overrides, window); its result is what a local
 * worker thread answers (metrics, ended, equity). No secret is ever part of either: the Redis password lives
 * in the connection only.
 *
 * A job's id is the hash of what its result depends on, so a coordinator started again with the same command
 * finds the results already there, and a combination retried after a worker died is still one result.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { JobSettings } from '../job-settings.js';
import type { ConfigSource } from '../strategy-configs.js';
import type { DataGaps, Metrics } from '../summary.js';
import type { RecordingFile } from '../tick-data.js';

/** The BullMQ queue every coordinator adds to and every `bot worker` takes from. */
export const QUEUE_NAME = 'spot-bot-backtest';
/** Bumped when the job's shape changes: a worker refuses another version's jobs. */
export const JOB_VERSION = 3;

/** A recording by content: what the run saw (RecordingFile) and where a worker can read the same bytes. */
export interface RecordingRef {
  file: RecordingFile;
  /** The file on the coordinator's machine, absolute: a worker that sees the same path (a shared mount) reads it. */
  at: string;
  /** Served by the coordinator (`--serve-data`): http://HOST:PORT/recordings/SHA256. */
  url?: string;
}

/** What every combination of one sweep shares. */
export interface SweepSpec {
  sources: ConfigSource[];
  settings: JobSettings;
  /** How the recordings were read (loadTicks): the worker reads them the same way. */
  load: { from?: number; to?: number; allowPartial: boolean };
  recordings: RecordingRef[];
}

export interface ComboJob {
  v: number;
  /** specHash(spec): the worker keeps the loaded data of the last spec it saw. */
  specHash: string;
  spec: SweepSpec;
  index: number;
  overrides: Record<string, unknown>;
  window: { from: number; to: number } | null;
}

export interface ComboResult {
  metrics: Metrics;
  ended: string[];
  equity: [number, number][];
  returns: number[];
  dataGaps: DataGaps;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * The spec's identity: its content, not where the recordings are read from (a coordinator serving them on
 * another address is still the same sweep).
 */
export function specHash(spec: SweepSpec): string {
  return sha256(
    JSON.stringify({
      v: JOB_VERSION,
      sources: spec.sources.map((s) => ({ file: s.file, sha256: s.sha256, raw: s.raw, module: s.module })),
      settings: spec.settings,
      load: spec.load,
      files: spec.recordings.map((r) => r.file),
    }),
  );
}

/** A combination's job id: the hash of its spec and its combination (hex: BullMQ ids take no ':'). */
export function comboJobId(hash: string, overrides: Record<string, unknown>, window: ComboJob['window']): string {
  return sha256(JSON.stringify([hash, overrides, window]));
}

const HEX64 = /^[0-9a-f]{64}$/;
const fileSchema = z.looseObject({
  path: z.string(),
  name: z.string(),
  size: z.number().int().nonnegative(),
  sha256: z.string().regex(HEX64),
});
const sourceSchema = z.looseObject({
  file: z.string(),
  sha256: z.string().regex(HEX64),
  raw: z.record(z.string(), z.unknown()),
  strategiesDir: z.string().optional(),
  module: z.object({ file: z.string(), sha256: z.string().regex(HEX64) }),
});
const comboJobSchema = z.object({
  v: z.literal(JOB_VERSION),
  specHash: z.string().regex(HEX64),
  spec: z.object({
    sources: z.array(sourceSchema).min(1),
    settings: z.looseObject({ makerFee: z.string(), takerFee: z.string() }),
    load: z.object({ from: z.number().optional(), to: z.number().optional(), allowPartial: z.boolean() }),
    recordings: z
      .array(
        z.object({
          file: fileSchema,
          at: z.string(),
          url: z
            .string()
            .regex(/^https?:\/\//)
            .optional(),
        }),
      )
      .min(1),
  }),
  index: z.number().int().nonnegative(),
  overrides: z.record(z.string(), z.unknown()),
  window: z.object({ from: z.number(), to: z.number() }).nullable(),
});

/** A job's data checked before anything of it is used; the problem names the field. */
export function parseComboJob(data: unknown): ComboJob {
  const parsed = comboJobSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`job data: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  // The data as sent, not zod's copy (whose key order differs, and the hash is of the JSON).
  const job = data as ComboJob;
  if (specHash(job.spec) !== job.specHash) throw new Error('job data: specHash does not match the spec it carries');
  return job;
}
