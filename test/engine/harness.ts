/**
 * Engine tests' collaborators: the real matching engine behind the real in-process venue, a temp-file store,
 * a virtual clock, and a venue wrapper that delegates everything and injects one fault at a time.
 */
import { rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { expect } from 'vitest';
import { z } from 'zod';
import { onePairInstance } from '../../src/config/strategy-file.js';
import { Engine, type EngineOptions } from '../../src/engine/engine.js';
import { createOperatorActions, type OperatorDeps } from '../../src/operator/actions.js';
import type { InstanceSpec } from '../../src/engine/instance-runner.js';
import type { ErrorCode } from '../../src/errors.js';
import { VenueError, type VenueErrorMeaning } from '../../src/ports/venue-errors.js';
import type { Balances, OrderRecord, PairConfig, Ticker, TradeRecord } from '../../src/ports/venue-records.js';
import { silentLogger } from '../../src/ops/logger.js';
import { VirtualClock as SteppedClock } from '../../src/clocks/virtual-clock.js';
import type { BalanceQuery, HistoryQuery, OrderRequest, Venue } from '../../src/ports/venue.js';
import { InProcessVenue } from '../../src/venues/in-process-venue.js';
import { MatchingEngine } from '../../src/sim/matching-engine.js';
import { type StrategyContext, type StrategyDefinition, defineStrategy } from '../../src/strategy/api.js';
import type { EventKind } from '../../src/store/events.js';
import { openStore, type Store } from '../../src/store/store.js';
import { whenDone } from '../support/scoped.js';
import { tempDir } from '../support/temp-dir.js';

export const T0 = Date.UTC(2024, 0, 2, 10, 0, 0);

/** expect.stringMatching, typed (it returns any). */
export function matching(re: RegExp): string {
  return expect.stringMatching(re) as string;
}

/** The virtual clock at T0; `advance` moves its time at once (the engine sets no timers of its own). */
export class VirtualClock extends SteppedClock {
  constructor(time = T0) {
    super(time);
  }
  advance(ms: number): number {
    this.time += ms;
    return this.time;
  }
}

/** A failure as an adapter would classify it (ports/venue-errors.ts). */
export function venueError(meaning: VenueErrorMeaning, code: ErrorCode, venueCode?: number): VenueError {
  return new VenueError(code, meaning, `${code} injected by the test venue`, { venueCode });
}

function picked(fault: boolean | ((query: HistoryQuery) => boolean), query: HistoryQuery = {}): boolean {
  return typeof fault === 'function' ? fault(query) : fault;
}

/** Delegates to the in-process venue; each field, when set, injects one fault. */
export class FaultyVenue implements Venue {
  /** Called with the request before it reaches the venue (e.g. to assert the journal row exists). */
  beforeCreate: ((request: OrderRequest) => void) | undefined;
  /** 'after-place': the order is placed, then the answer is lost. 'before-place': lost before reaching the venue. */
  createFault: { when: 'after-place' | 'before-place'; error: Error } | undefined;
  /** Order history reads fail (all of them, or those the function picks: e.g. a record it cannot read). */
  historyFails: boolean | ((query: HistoryQuery) => boolean) = false;
  /** Exchange ids order history no longer lists (an exchange that keeps only recent history). */
  readonly historyForgets = new Set<string>();
  /** Trade history reads fail (all of them, or those the function picks). */
  tradesFail: boolean | ((query: HistoryQuery) => boolean) = false;
  /** Every call fails with this error (an exchange outage). */
  outage: Error | undefined;
  creates = 0;
  readonly cancelOrder: ((symbol: string, displayingId: string) => Promise<OrderRecord>) | undefined;

  constructor(
    readonly inner: InProcessVenue,
    options: { canCancel?: boolean } = {},
  ) {
    this.cancelOrder =
      options.canCancel === false ? undefined : (symbol, id) => this.guard(() => this.inner.cancelOrder(symbol, id));
  }

  get revision(): number {
    return this.inner.revision;
  }

  private guard<T>(fn: () => Promise<T>): Promise<T> {
    return this.outage ? Promise.reject(this.outage) : fn();
  }

  /** Market-watch reads made. */
  marketWatchAsked = 0;
  marketWatch(symbol?: string): Promise<Ticker[]> {
    this.marketWatchAsked++;
    return this.guard(() => this.inner.marketWatch(symbol));
  }
  pairConfig(symbol?: string): Promise<PairConfig[]> {
    return this.guard(() => this.inner.pairConfig(symbol));
  }
  balance(query?: BalanceQuery): Promise<Balances> {
    return this.guard(() => this.inner.balance(query));
  }
  /** The pair each open-orders read asked for (undefined: every pair), in order. */
  readonly openOrdersAsked: (string | undefined)[] = [];
  openOrders(pair?: string): Promise<OrderRecord[]> {
    this.openOrdersAsked.push(pair);
    return this.guard(() => this.inner.openOrders(pair));
  }
  /** Each order-history and trade-history page asked for, in order. */
  readonly historyAsked: HistoryQuery[] = [];
  readonly tradesAsked: HistoryQuery[] = [];
  orderHistory(query?: HistoryQuery): Promise<OrderRecord[]> {
    this.historyAsked.push({ ...query });
    if (picked(this.historyFails, query)) return Promise.reject(venueError('temporary', 'E_TIMEOUT'));
    return this.guard(async () =>
      (await this.inner.orderHistory(query)).filter((o) => !this.historyForgets.has(o.displayingId)),
    );
  }
  tradeHistory(query?: HistoryQuery): Promise<TradeRecord[]> {
    this.tradesAsked.push({ ...query });
    if (picked(this.tradesFail, query)) return Promise.reject(venueError('temporary', 'E_HTTP'));
    return this.guard(() => this.inner.tradeHistory(query));
  }
  async createOrder(request: OrderRequest): Promise<OrderRecord> {
    this.beforeCreate?.(request);
    const fault = this.createFault;
    this.createFault = undefined;
    if (fault?.when === 'before-place') throw fault.error;
    if (this.outage) throw this.outage;
    this.creates++;
    const record = await this.inner.createOrder(request);
    if (fault?.when === 'after-place') throw fault.error;
    return record;
  }
}

export interface HarnessOptions {
  balances?: Record<string, string>;
  canCancel?: boolean;
  engine?: Partial<EngineOptions>;
  sim?: ConstructorParameters<typeof MatchingEngine>[0];
}

/** A strategy file for a test instance (defaults applied by the real schema). */
export function instance(
  name: string,
  definition: StrategyDefinition,
  file: Record<string, unknown> = {},
): InstanceSpec {
  const config = onePairInstance({ name, strategy: 'inline', symbol: 'BTCUSDT', ...file });
  return { config, definition, params: definition.params.parse(config.params) };
}

/** A strategy whose onTick runs `tick` (params: none). */
export function strategy(
  hooks: Omit<StrategyDefinition<z.ZodObject>, 'name' | 'params' | 'onTick'> & {
    onTick?: StrategyDefinition['onTick'];
  },
  name = 'test',
): StrategyDefinition {
  return defineStrategy({ name, params: z.object({}), onTick: () => undefined, ...hooks });
}

/** One resting BUY far below the price (90) on every tick. */
export const buyEveryTick: StrategyDefinition = strategy({
  onTick(ctx) {
    ctx.limit('BUY', '90', '0.01', { tag: 'rest' });
  },
});

/** A strategy that runs `fn` on its first tick only. */
export function firstTick(fn: (ctx: StrategyContext) => void): StrategyDefinition {
  let done = false;
  return strategy({
    onTick(ctx) {
      if (done) return;
      done = true;
      fn(ctx);
    },
  });
}

/**
 * Holds the harness venue's next balance read until `release()`; `inBalance` resolves once it is held. Lets
 * a test run a tick in the middle of a poll (between recording a fill and delivering it).
 */
export function holdNextBalanceRead(h: Harness): { inBalance: Promise<void>; release: () => void } {
  let release!: () => void;
  let entered!: () => void;
  const inBalance = new Promise<void>((r) => (entered = r));
  const gate = new Promise<void>((r) => (release = r));
  const venue = h.venue as unknown as { balance: (q?: BalanceQuery) => Promise<Balances> };
  const original = venue.balance.bind(h.venue);
  let armed = true;
  venue.balance = async (q) => {
    if (armed) {
      armed = false;
      entered();
      await gate;
    }
    return original(q);
  };
  return { inBalance, release };
}

/**
 * The venue moves to `price` (an order fills), an orders poll records the fill and is held in its balance
 * read, before delivering it to onFill; a market tick runs meanwhile (outside the lock); then both finish.
 */
export async function tickWhilePollDelivers(h: Harness, price: number): Promise<void> {
  const { inBalance, release } = holdNextBalanceRead(h);
  h.clock.advance(5000);
  h.sim.onPrice('BTCUSDT', price, h.clock.now());
  const poll = h.engine!.pollOrders()!;
  await inBalance;
  h.clock.advance(100);
  const tick = h.engine!.observe(await h.venue.inner.marketWatch('BTCUSDT'));
  release();
  await poll;
  if (tick) await tick;
}

/**
 * While `on`, every commit of the store fails as SQLite fails on a full disk (SQLITE_FULL), after the
 * transaction's statements ran: what a full disk does to a commit, deterministically.
 */
export function diskFull(store: Store): { on: boolean } {
  const fault = { on: false };
  const real = store.transaction.bind(store);
  store.transaction = <T>(fn: () => T): T => {
    if (!fault.on || store.db.inTransaction) return real(fn);
    return real(() => {
      const result = fn();
      throw new Database.SqliteError('database or disk is full', 'SQLITE_FULL');
      return result;
    });
  };
  return fault;
}

/** The operator layer's actions on the harness's engine and store (the kill-switch file in its folder). */
export function operatorActions(h: Harness, engine: Engine, deps: Partial<OperatorDeps> = {}) {
  return createOperatorActions({
    engine,
    store: h.store,
    clock: h.clock,
    logger: silentLogger,
    killSwitchFile: join(h.dir, 'KILL'),
    configDir: h.dir,
    strategiesDir: undefined,
    instances: [],
    ...deps,
  });
}

export class Harness {
  readonly clock = new VirtualClock();
  readonly sim: MatchingEngine;
  readonly venue: FaultyVenue;
  readonly dir = tempDir('engine-test');
  store: Store;
  engine: Engine | undefined;

  private closed = false;

  /** Closed when the test that made it ends (or its file, for one made outside a test): test/support/scoped.ts. */
  constructor(private readonly options: HarnessOptions = {}) {
    whenDone(() => this.close());
    this.sim = new MatchingEngine({ clock: this.clock, ...options.sim });
    this.sim.createAccount({ apiKey: 'k', balances: options.balances ?? { USDT: '100000', BTC: '2' } });
    this.venue = new FaultyVenue(new InProcessVenue(this.sim, 'k'), { canCancel: options.canCancel });
    this.store = this.openStore();
  }

  openStore(): Store {
    return openStore({ path: join(this.dir, 'bot.db'), clock: this.clock });
  }

  /** A new engine over the same venue and store (a restart when the previous one was stopped). */
  async start(instances: InstanceSpec[], engine: Partial<EngineOptions> = {}): Promise<Engine> {
    this.engine = new Engine({
      venue: this.venue,
      clock: this.clock,
      store: this.store,
      logger: silentLogger,
      instances,
      ...this.options.engine,
      ...engine,
    });
    await this.engine.start();
    return this.engine;
  }

  /** Moves time and price (the venue matches), then runs one market cycle and one orders poll. */
  async tick(price: number, stepMs = 5_000, symbol = 'BTCUSDT'): Promise<void> {
    await this.marketTick(price, stepMs, symbol);
    await this.engine!.pollOrders();
  }

  /** h.tick without the orders poll: moves time and price, then one market cycle only. */
  async marketTick(price: number, stepMs = 5_000, symbol = 'BTCUSDT'): Promise<void> {
    this.clock.advance(stepMs);
    this.sim.onPrice(symbol, price, this.clock.now());
    const p = this.engine!.observe(await this.venue.inner.marketWatch(symbol));
    if (p) await p;
  }

  /** Sets the first price without running the engine (the venue needs one for MARKET/stop orders). */
  price(price: number, symbol = 'BTCUSDT'): void {
    this.sim.onPrice(symbol, price, this.clock.now());
  }

  async restart(instances: InstanceSpec[], engine: Partial<EngineOptions> = {}): Promise<Engine> {
    await this.engine?.stop();
    this.store.close();
    this.store = this.openStore();
    return this.start(instances, engine);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.engine?.stop();
    this.store.close();
    rmSync(this.dir, { recursive: true, force: true });
  }

  events(kind?: EventKind) {
    return this.store.events.list(kind === undefined ? {} : { kinds: [kind] });
  }

  /** An instance's SELL fills as the exit tests read them: price, quantity and the order's tag. */
  sells(instance: string) {
    return this.store.fills
      .forInstance(instance)
      .filter((f) => f.side === 'SELL')
      .map((f) => ({ price: f.price, qty: f.qty, tag: this.store.orders.get(f.orderLocalId)?.tag }));
  }
}
