/**
 * The pair configuration each symbol's recordings carry, as a replay takes it: the first one read (a file's
 * header, else a pairConfig line, as the recorder writes one when the configuration comes after the file began
 * or changes). A replay trades a pair by one configuration; a later, different one is told once per symbol.
 */
import type { PairConfig } from '../ports/venue-records.js';

export class RecordedPairs {
  /** By symbol, in first-seen order. */
  readonly bySymbol = new Map<string, PairConfig>();
  private readonly changed = new Set<string>();

  /** `warn` hears of a change; `who` names what keeps the first one ('the backtest', 'the replay'). */
  constructor(
    private readonly warn: (message: string) => void,
    private readonly who: string,
  ) {}

  /** A configuration read in `file`: from its header (t undefined) or a pairConfig line at time t. */
  seen(config: PairConfig, file: string, t: number | undefined): void {
    const first = this.bySymbol.get(config.symbol);
    if (!first) this.bySymbol.set(config.symbol, config);
    else if (!this.changed.has(config.symbol) && JSON.stringify(first) !== JSON.stringify(config)) {
      this.changed.add(config.symbol);
      const when = t === undefined ? 'in its header' : `at ${new Date(t).toISOString()}`;
      this.warn(`${file}: the pair configuration of ${config.symbol} changes ${when}; ${this.who} keeps the first one`);
    }
  }
}
