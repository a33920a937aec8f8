/** The collaborators the engine's parts share: the order manager, the order sync, the reconciler, the fill recorder (one set per engine). */
import type { Logger } from '../ops/logger.js';
import type { Clock } from '../ports/clock.js';
import type { Venue } from '../ports/venue.js';
import type { Store } from '../store/store.js';
import type { MarketState } from './market-state.js';
import type { JournalCache } from './journal-cache.js';
import type { TradingGuard } from './trading-guard.js';

export interface EngineParts {
  venue: Venue;
  clock: Clock;
  store: Store;
  logger: Logger;
  journal: JournalCache;
  market: MarketState;
  guard: TradingGuard;
  /** Local ids whose create request is on its way: their PENDING rows are not reconciled meanwhile. */
  inFlight: Set<string>;
}
