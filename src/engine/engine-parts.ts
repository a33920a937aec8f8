/** The collaborators the engine's parts share: the order manager, the order sync, the reconciler, the fill recorder (one set per engine). */
import type { Logger } from '../ops/logger.js';
import type { Clock } from '../ports/clock.js';
import type { Venue } from '../ports/venue.js';
import type { Store } from '../store/store.js';
import type { MarketState } from './market-state.js';
import type { JournalCache } from './journal-cache.js';
import type { TradingGuard } from './trading-guard.js';

/**
 * A class, not an object literal, like every object made once per engine that hot code reads (docs/architecture.md,
 * "Objects made once per run"): V8 widens a literal's field types the second time the literal is evaluated, which
 * discarded the compiled order path of every backtest after the first in a sweep's thread.
 */
export class EngineParts {
  constructor(
    readonly venue: Venue,
    readonly clock: Clock,
    readonly store: Store,
    readonly logger: Logger,
    readonly journal: JournalCache,
    readonly market: MarketState,
    readonly guard: TradingGuard,
  ) {}
}
