/**
 * The one environment schema: every area's variables (config/env.ts: the exchange, the daemon, the listeners;
 * notify/env.ts: the notifier), validated at once so that every problem is named in one go.
 */
import { z } from 'zod';
import { checkCoreEnv, coreEnvShape, loadDotenvFile, parseEnvWith } from '../config/env.js';
import { checkNotifyEnv, notifyEnv } from '../notify/env.js';
import { paperFillEnv } from '../sim/fill-env.js';

/** Every area's variables; a new area adds its shape here rather than writing a second schema. */
export const envShape = { ...coreEnvShape, ...notifyEnv, ...paperFillEnv };

export const EnvSchema = z.object(envShape).superRefine((env, ctx) => {
  checkCoreEnv(env, ctx);
  checkNotifyEnv(env, ctx);
});
export type Env = z.infer<typeof EnvSchema>;

/**
 * Validates a set of variables (no .env, no process.env), secrets read from their NAME_FILE where given: each
 * problem names the variable (and the file).
 */
export function parseEnv(source: Readonly<Record<string, string | undefined>>): Env {
  return parseEnvWith(EnvSchema, source);
}

/**
 * Loads `.env` (from the working directory unless `path` is given) into process.env without overriding what
 * is already set, then validates process.env.
 */
export function loadEnv(options: { path?: string } = {}): Env {
  loadDotenvFile(options.path);
  return parseEnv(process.env);
}
