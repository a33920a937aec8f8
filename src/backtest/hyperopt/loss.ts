/**
 * A hyperopt's loss: one number per trial, lower is better; null when the trial's figure is undefined (a
 * Sharpe without any deviation), which ranks after every defined loss.
 *
 * - sharpe, sortino, calmar: minus the ratio (the report's, annualised);
 * - profit: minus the total return %;
 * - max-drawdown: the maximum drawdown % of a trial that did not lose money; a losing one scores 100 plus its
 *   loss % (any loss is worse than any drawdown): the calmest way to make money, never "don't trade and lose";
 * - profit-drawdown: minus (total return % minus maximum drawdown %): return and the pain on the way, in one unit;
 * - strategy: the strategy's own `hyperoptLoss(trial)` (strategy/api.ts), given the trial's figures and its
 *   equity samples; a value that is not finite ranks like an undefined one.
 */
import type { StrategyDefinition, TrialResult } from '../../strategy/api.js';
import { BotError } from '../../errors.js';
import type { Metrics } from '../summary.js';
import { type RankBy } from '../sweep.js';

export const LOSSES = ['sharpe', 'sortino', 'calmar', 'profit', 'max-drawdown', 'profit-drawdown', 'strategy'] as const;
export type LossName = (typeof LOSSES)[number];

/** The ranking objective whose column the tables show beside a loss (the return for those without one). */
export const LOSS_OBJECTIVE: Record<LossName, RankBy> = {
  sharpe: 'sharpe',
  sortino: 'sortino',
  calmar: 'calmar',
  profit: 'return',
  'max-drawdown': 'return',
  'profit-drawdown': 'return',
  strategy: 'return',
};

const num = (v: string | null): number | null => (v === null ? null : Number(v));
const neg = (v: string | null): number | null => (v === null ? null : -Number(v));

/** What a strategy's hyperoptLoss is given. */
export function trialResult(metrics: Metrics, equity: readonly [number, number][]): TrialResult {
  return {
    totalReturnPct: Number(metrics.totalReturnPct),
    maxDrawdownPct: Number(metrics.maxDrawdownPct),
    sharpe: num(metrics.sharpe),
    sortino: num(metrics.sortino),
    calmar: num(metrics.calmar),
    profitFactor: num(metrics.profitFactor),
    winRatePct: num(metrics.winRatePct),
    expectancy: num(metrics.expectancy),
    roundTrips: metrics.roundTrips,
    fills: metrics.fills,
    exposurePct: Number(metrics.exposurePct),
    feesQuote: Number(metrics.feesQuote),
    equity: equity.map(([, e]) => e),
  };
}

export type LossFunction = (metrics: Metrics, equity: readonly [number, number][]) => number | null;

/** The loss function named; `definition` is the strategy whose hyperoptLoss `strategy` calls. */
export function lossFunction(
  name: LossName,
  definition?: Pick<StrategyDefinition, 'name' | 'hyperoptLoss'>,
): LossFunction {
  switch (name) {
    case 'sharpe':
      return (m) => neg(m.sharpe);
    case 'sortino':
      return (m) => neg(m.sortino);
    case 'calmar':
      return (m) => neg(m.calmar);
    case 'profit':
      return (m) => -Number(m.totalReturnPct);
    case 'max-drawdown':
      return (m) => (Number(m.totalReturnPct) >= 0 ? Number(m.maxDrawdownPct) : 100 - Number(m.totalReturnPct));
    case 'profit-drawdown':
      return (m) => -(Number(m.totalReturnPct) - Number(m.maxDrawdownPct));
    case 'strategy': {
      const own = definition?.hyperoptLoss;
      if (own === undefined)
        throw new BotError(
          'E_USAGE',
          `--loss strategy: strategy ${definition?.name ?? '?'} exports no hyperoptLoss(trial) (strategy/api.ts)`,
        );
      return (m, equity) => {
        const v = own(trialResult(m, equity));
        return Number.isFinite(v) ? v : null;
      };
    }
  }
}
