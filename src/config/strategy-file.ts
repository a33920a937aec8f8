/**
 * A strategy file in config/ is one bot instance: which strategy, on which symbol, how often, with which
 * parameters and risk limits. Unknown keys are errors (a typo must never fall back to a default silently).
 */
import { z } from 'zod';
import {
  decimalParam,
  type ExitRulesDecl,
  ExitRulesSchema,
  type ProtectionsDecl,
  ProtectionsSchema,
  type StrategyDefinition,
} from '../strategy/api.js';
import { issueLines } from './problems.js';

export const RiskLimitsSchema = z.strictObject({
  /** Largest value of one order in the quote asset (price × quantity). */
  maxOrderNotional: decimalParam.optional(),
  /** Most orders of this instance open at once. */
  maxOpenOrders: z.number().int().positive().optional(),
  /** Largest base-asset position this instance may hold. */
  maxPosition: decimalParam.optional(),
  /** Realised loss in the quote asset after which new entries stop until the next UTC day. */
  dailyLossLimit: decimalParam.optional(),
});
export type RiskLimits = z.infer<typeof RiskLimitsSchema>;

export const StrategyFileSchema = z.strictObject({
  /** Instance name: unique across config/, used in logs, the journal and status. */
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'letters, digits, _ . - (at most 64)'),
  /** Module name in strategies/ (file name without extension). */
  strategy: z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, 'a module name in strategies/, e.g. "grid"'),
  symbol: z.string().regex(/^[A-Z0-9]{2,20}$/, 'an exchange symbol such as "BTCUSDT"'),
  /** cron expression (seconds allowed, UTC) for how often this instance observes the market live/paper. */
  schedule: z.string().min(1).default('*/5 * * * * *'),
  enabled: z.boolean().default(true),
  params: z.record(z.string(), z.unknown()).default({}),
  risk: RiskLimitsSchema.default({}),
  /**
   * How long one call of a hook (onStart, onTick, onFill, onStop) may take before it is abandoned and the
   * instance paused (default 5000 ms when absent).
   */
  hookTimeoutMs: z.number().int().min(1).max(600_000).optional(),
  /** Exits the engine enforces (strategy/api.ts ExitRulesDecl); each key set here wins over the strategy's. */
  exits: ExitRulesSchema.optional(),
  /** Protections the engine enforces (ProtectionsDecl); each key set here wins over the strategy's. */
  protections: ProtectionsSchema.optional(),
});
export type StrategyFile = z.infer<typeof StrategyFileSchema>;

/** The exits and protections an instance runs with: the strategy's own, each key the strategy file sets over it. */
export function declaredExits(
  definition: Pick<StrategyDefinition, 'exits' | 'protections'>,
  file: Pick<StrategyFile, 'exits' | 'protections'>,
): { exits: ExitRulesDecl | undefined; protections: ProtectionsDecl | undefined } {
  const merge = <T extends object>(own: T | undefined, set: T | undefined): T | undefined =>
    own === undefined && set === undefined ? undefined : ({ ...own, ...set } as T);
  return { exits: merge(definition.exits, file.exits), protections: merge(definition.protections, file.protections) };
}

/** What is wrong with the exits and protections a strategy module declares, one line each naming `where` and the key. */
export function definitionExitProblems(where: string, definition: StrategyDefinition): string[] {
  const problems: string[] = [];
  for (const [field, schema] of [
    ['exits', ExitRulesSchema],
    ['protections', ProtectionsSchema],
  ] as const) {
    const value = definition[field];
    if (value === undefined) continue;
    const parsed = schema.safeParse(value);
    if (!parsed.success) problems.push(...issueLines(where, parsed.error.issues, value, schema, [field]));
  }
  return problems;
}
