/**
 * A strategy file in config/ is one bot instance per pair: which strategy, on which symbol (or symbols), how
 * often, with which parameters and risk limits. Unknown keys are errors (a typo must never fall back to a default
 * silently).
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
import type { Dec } from '../market/decimal.js';
import { pairInstanceName } from '../market/instance-names.js';
import { issueLines } from './problems.js';
import { isPairListCandidate, PairListSchema } from './pair-list.js';

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

/** `stakePerTrade`: a quote amount ("100"), or a share of the free quote balance ("25%"). */
export type Stake = { quote: Dec } | { pctOfFree: number };

const StakeSchema = z.union([z.number(), z.string()]).transform((v, ctx): Stake => {
  const text = typeof v === 'string' ? v.trim() : String(v);
  const pct = /^(\d+(?:\.\d+)?)\s*%$/.exec(text);
  if (pct) {
    const n = Number(pct[1]);
    if (n > 0 && n <= 100) return { pctOfFree: n };
  } else {
    const amount = decimalParam.safeParse(v);
    if (amount.success) return { quote: amount.data };
  }
  ctx.addIssue({
    code: 'custom',
    message: `expected a quote amount ("100") or a share of the free balance ("25%", at most 100), found ${JSON.stringify(v)}`,
  });
  return z.NEVER;
});

/** Limits across a strategy file's pairs, beside each pair's own `risk`: an entry that would break one is refused. */
export const PortfolioSchema = z.strictObject({
  /** Most pairs holding a trade at once: a position (more than dust) or a working buy. */
  maxOpenTrades: z.number().int().positive().optional(),
  /** Most quote one pair's trade may hold: its position at the last price and its working buys, with the new one. */
  stakePerTrade: StakeSchema.optional(),
  /** Most quote the file's pairs hold together, counted the same way. */
  maxExposure: decimalParam.optional(),
});
export type PortfolioLimits = z.infer<typeof PortfolioSchema>;

const SymbolSchema = z.string().regex(/^[A-Z0-9]{2,20}$/, 'an exchange symbol such as "BTCUSDT"');

export const StrategyFileSchema = z
  .strictObject({
    /**
     * Instance name: unique across config/, used in logs, the journal and status. A file of `symbols` names each
     * pair's instance `<name>/<SYMBOL>`.
     */
    name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'letters, digits, _ . - (at most 64)'),
    /** Module name in strategies/ (file name without extension). */
    strategy: z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, 'a module name in strategies/, e.g. "grid"'),
    /** The one pair this file trades; or `symbols`, several (one instance each, on one account). */
    symbol: SymbolSchema.optional(),
    symbols: z
      .array(SymbolSchema)
      .min(1)
      .max(1000)
      .refine((list) => new Set(list).size === list.length, 'each symbol once')
      .optional(),
    /**
     * Or a pair list (config/pair-list.ts): the pairs chosen from the market watch at each refresh. A pair that
     * leaves the list takes no new entries; what it holds is still managed and exited as declared.
     */
    pairlist: PairListSchema.optional(),
    /** Limits across the file's pairs (PortfolioSchema), beside each pair's own `risk`. */
    portfolio: PortfolioSchema.optional(),
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
  })
  .superRefine((file, ctx) => {
    if (file.portfolio !== undefined && file.symbol !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['portfolio'],
        message: 'expected only beside symbols or pairlist (limits across several pairs), found it beside symbol',
      });
    const given = (['symbol', 'symbols', 'pairlist'] as const).filter((k) => file[k] !== undefined);
    if (given.length !== 1)
      ctx.addIssue({
        code: 'custom',
        path: [given[1] ?? 'symbol'],
        message: `expected one of symbol (one pair), symbols (several) or pairlist (chosen from the market watch), found ${given.length === 0 ? 'none' : given.join(' and ')}`,
      });
  });
export type StrategyFile = z.infer<typeof StrategyFileSchema>;

/**
 * One instance of a strategy file: the file's settings on one pair. A file of `symbols` makes one per pair, named
 * `<name>/<SYMBOL>`, each with the file's name as its `group`.
 */
export type InstanceConfig = Omit<StrategyFile, 'symbol' | 'symbols'> & {
  /** The pair; PAIR_LIST_TEMPLATE on a pair list's file before its pairs are known (expandPairLists). */
  symbol: string;
  /** The strategy file's name when it trades several pairs (its instances are shown together under it). */
  group?: string;
};

/** The symbol of a pair list's file until the pairs it may choose from are known. */
export const PAIR_LIST_TEMPLATE = '*';

/**
 * The instances a strategy file makes: one on its `symbol`, one per pair of its `symbols`, and for a `pairlist`
 * one per pair of `universe` it may ever choose (its quote asset, not excluded); without a universe, one template
 * (symbol PAIR_LIST_TEMPLATE) that expandPairLists makes into them once the market's pairs are known.
 */
export function fileInstances(file: StrategyFile, universe?: readonly string[]): InstanceConfig[] {
  const { symbol, symbols, ...rest } = file;
  const pairs = (list: readonly string[]) =>
    list.map((s) => ({ ...rest, name: pairInstanceName(file.name, s), symbol: s, group: file.name }));
  if (rest.pairlist !== undefined) {
    const list = rest.pairlist;
    if (universe === undefined) return [{ ...rest, symbol: PAIR_LIST_TEMPLATE, group: file.name }];
    return pairs([...new Set(universe)].filter((s) => isPairListCandidate(list, s)).sort());
  }
  if (symbols === undefined) return [{ ...rest, symbol: symbol as string }];
  return pairs(symbols);
}

/**
 * Instances with each pair list's template made into one instance per pair of `universe` (the market's pairs:
 * the venue's, or the recordings') the list may choose; the others as they are.
 */
export function expandPairLists<T extends { config: InstanceConfig }>(
  instances: readonly T[],
  universe: readonly string[],
): T[] {
  return instances.flatMap((i) =>
    i.config.symbol !== PAIR_LIST_TEMPLATE || i.config.pairlist === undefined
      ? [i]
      : fileInstances({ ...i.config, name: i.config.group ?? i.config.name, symbol: undefined }, universe).map(
          (config) => ({ ...i, config }),
        ),
  );
}

/** Whether a pair list of `instances` may choose `symbol` (a pair the exchange lists later may join it). */
export function somePairListMayChoose(instances: readonly { config: InstanceConfig }[], symbol: string): boolean {
  return instances.some((i) => i.config.pairlist !== undefined && isPairListCandidate(i.config.pairlist, symbol));
}

/** Whether some instance is a pair list's template (its pairs not known yet). */
export function hasPairListTemplate(instances: readonly { config: InstanceConfig }[]): boolean {
  return instances.some((i) => i.config.symbol === PAIR_LIST_TEMPLATE);
}

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

/** The one instance of a strategy file of one pair (tests and benches make instances this way). */
export function onePairInstance(raw: unknown): InstanceConfig {
  const [config, ...more] = fileInstances(StrategyFileSchema.parse(raw));
  if (config === undefined || more.length > 0) throw new Error('expected a strategy file of one pair');
  return config;
}
