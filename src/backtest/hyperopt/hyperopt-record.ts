/**
 * What a hyperopt's outputs hold (hyperopt.json, .csv, .html): its inputs, its trials ranked, the luck in its
 * best, and the sentence that says how the trials were ranked.
 */
import type { JobSettings } from '../job-settings.js';
import type { LuckRecord } from '../luck/luck.js';
import type { ConfigSource } from '../strategy-configs.js';
import type { RecordingFile } from '../tick-data.js';
import type { HoldoutRecord, WalkForwardRecord } from '../validation-runs.js';
import type { HyperoptSettings, Trial } from './search.js';

export type RankedTrial = Trial & { rank: number | null };

export interface HyperoptRecord {
  name: string;
  sources: readonly ConfigSource[];
  data: readonly RecordingFile[];
  settings: JobSettings;
  fixed: Readonly<Record<string, unknown>>;
  hyperopt: HyperoptSettings;
  /** Ranked (rankTrials), best first. */
  trials: readonly RankedTrial[];
  luck: LuckRecord | null;
  /** The best's --set flags; null when --min-dsr refused them (or nothing was ranked). */
  sets: string[] | null;
  /** The strategy file with the best values set (null as sets). */
  bestFile: unknown;
  holdout?: HoldoutRecord;
  walkForward?: WalkForwardRecord;
}

export function rankingLine(h: HyperoptSettings): string {
  const min = h.minTrades > 0 ? `; fewer than ${h.minTrades} closed trades: not ranked` : '';
  return `by ${h.loss} loss (lower is better), then trial order; failed trials (an instance ended early) and trials the strategy file refused are not ranked${min}`;
}
