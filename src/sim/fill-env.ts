/**
 * The simulated exchange's fill-model variables for paper on recordings (as a backtest's flags), part of the
 * one environment schema (app/env.ts).
 */
import { z } from 'zod';
import { withDefault } from '../config/env.js';
import { CANDLE_PATHS, type CandlePath, DEFAULT_CANDLE_PATH, parseParticipation } from './candle-path.js';

export const paperFillEnv = {
  PAPER_CANDLE_PATH: withDefault(
    z.string().transform((text, ctx): CandlePath => {
      if ((CANDLE_PATHS as readonly string[]).includes(text.trim())) return text.trim() as CandlePath;
      ctx.addIssue({ code: 'custom', message: `expected one of ${CANDLE_PATHS.join(', ')}` });
      return z.NEVER;
    }),
    DEFAULT_CANDLE_PATH,
    `paper on recordings imported from candles: the path inside each candle (as a backtest's --candle-path): ${CANDLE_PATHS.join(', ')}`,
  ),
  PAPER_PARTICIPATION: withDefault(
    z.string().transform((text, ctx): string | null => {
      try {
        return parseParticipation(text, 'PAPER_PARTICIPATION');
      } catch {
        ctx.addIssue({ code: 'custom', message: 'expected a share of the traded volume such as 10% or 0.25, or off' });
        return z.NEVER;
      }
    }),
    '10%',
    "paper on recordings: the share of each tick's traded volume fills may take on candle data, takers paying the square-root impact of their size (as a backtest's --participation): 10%, 0.25, or off (neither)",
  ),
};
