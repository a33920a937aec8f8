/**
 * Grid: a fixed ladder of LIMIT orders around a reference price that harvests the spacing as the price
 * oscillates. Level k sits at reference + k × step, for k in [-levels, levels]. The ladder is a set of
 * slots: slot j owns level j (where it buys) and level j + 1 (where it sells what it bought). The slots are
 * the levels below the reference, plus those above it that `initialBase` seeded with base to sell, so
 * - a slot holding no base keeps a buy at its level, when that level is below the market;
 * - a filled buy at level j turns into a sell at level j + 1, a filled sell at level j + 1 into a buy at j.
 * Orders carry the tag `grid:<level>:<buy|sell>`, which is how a slot knows it is armed (a sell also names the
 * slot's buy it closes, so closed trades pair each sale with its own slot's buy): every tick (and
 * every fill) re-arms what is missing and never duplicates what is open or pending, so it is idempotent and
 * survives restarts (open orders come from the engine's journal, slots from the persisted state).
 *
 * It never cancels, so it runs on venues without cancel. The range is fixed: when the price leaves it the
 * grid waits (logging it once) instead of chasing. It only sells base it bought, plus `initialBase`,
 * which seeds sells on the slots above the reference at start. `budgetQuote` caps the quote tied up in open
 * buys plus the cost of the base held.
 */
import { z } from 'zod';
import {
  type Balance,
  D,
  type Dec,
  dec,
  decimalParam,
  defineStrategy,
  exactlyOne,
  type FillView,
  floorTo,
  noticeOnce,
  type OrderView,
  type PairRules,
  type StrategyContext,
} from '../src/strategy/api.js';

const params = z
  .object({
    /** Centre of the ladder; the first price observed when absent (kept in state). */
    referencePrice: decimalParam.optional(),
    /** Levels on each side of the reference. */
    levels: z.number().int().min(1).max(50).default(5),
    /** Distance between levels in percent of the reference (0.3 = 0.3 %)… */
    spacingPct: decimalParam.optional(),
    /** …or in quote units. */
    spacingAbs: decimalParam.optional(),
    /** Base quantity per order… */
    quantity: decimalParam.optional(),
    /** …or quote value per buy (base = quotePerLevel / level price). */
    quotePerLevel: decimalParam.optional(),
    /** Most quote tied up in open buys plus the cost of the base held; no cap when absent. */
    budgetQuote: decimalParam.optional(),
    /** Base the grid may sell without having bought it: seeds sells on the levels above the reference. */
    initialBase: decimalParam.optional(),
  })
  .superRefine((p, ctx) => {
    exactlyOne(p, 'spacingPct', 'spacingAbs', ctx);
    exactlyOne(p, 'quantity', 'quotePerLevel', ctx);
    if (p.spacingPct && p.spacingPct.mul(p.levels).gte(100)) {
      ctx.addIssue({
        code: 'custom',
        path: ['spacingPct'],
        message: `expected spacingPct × levels below 100 (the lowest level must stay above zero), found ${p.spacingPct.toFixed()} × ${p.levels}`,
      });
    }
  });

type Params = z.infer<typeof params>;

/** One slot of the ladder, as JSON: base held from its buy (not yet sold) and the quote that base cost. */
interface Slot {
  held: string;
  cost: string;
}

interface GridState {
  /** The first price seen, when no referencePrice is given. */
  reference?: string;
  /** Slots by their buy level; created on the first tick with a price. */
  slots?: Record<string, Slot>;
  /** Which side of the range the price was last seen outside of, so that it is logged once. */
  outside?: 'above' | 'below';
  /** One-off notices already logged. */
  noticed?: string[];
}

type Ctx = StrategyContext<Params, GridState>;

const TAG = /^grid:(-?\d+):(buy|sell)$/;
const tag = (level: number, side: 'buy' | 'sell'): string => `grid:${level}:${side}`;

/** One level of the ladder, with the buy it would place there (rounded by the pair's rules). */
interface Level {
  price: Dec;
  /** The price as a double: only to tell the engine the band a quiet call holds for (declareQuiet). */
  value: number;
  buyTag: string;
  sellTag: string;
  bid: Dec;
  bidQty: Dec;
  bidCost: Dec;
  /** The pair would refuse that buy (below its minimums). */
  small: boolean;
}

/**
 * The ladder's geometry, levels built once each. Ladder and Memo are classes, not literals with closures: a sweep
 * runs many instances in one thread, and one `level` function for all of them (with fields of stable types) keeps
 * the code compiled for the first instance valid for the next (docs/architecture.md, "Objects made once per run").
 */
class Ladder {
  private readonly built = new Map<number, Level>();
  /** The reference and the step as doubles: only to tell cheaply which levels the price sits between. */
  readonly referenceNumber: number;
  readonly stepNumber: number;

  constructor(
    readonly levels: number,
    private readonly reference: Dec,
    private readonly step: Dec,
    private readonly params: Params,
    private readonly rules: PairRules,
  ) {
    this.referenceNumber = reference.toNumber();
    this.stepNumber = step.toNumber();
  }

  /** Base for one order at `price`. */
  quantityAt(price: Dec): Dec {
    return this.params.quantity ?? this.params.quotePerLevel!.div(price);
  }

  level(j: number): Level {
    let level = this.built.get(j);
    if (level === undefined) this.built.set(j, (level = this.make(j)));
    return level;
  }

  private make(j: number): Level {
    const { rules } = this;
    const price = this.reference.plus(this.step.mul(j));
    const bid = floorTo(price, rules.tickSize);
    const bidQty = floorTo(this.quantityAt(price), rules.stepSize);
    const bidCost = bid.mul(bidQty);
    const small = bidQty.lte(0) || bidQty.lt(rules.minQty) || bidCost.lt(rules.minNotional) || bid.lt(rules.minPrice);
    const value = price.toNumber();
    return { price, value, buyTag: tag(j, 'buy'), sellTag: tag(j, 'sell'), bid, bidQty, bidCost, small };
  }
}

/** The inputs of ticks that placed nothing: the price bands they saw, with everything else they saw. */
interface Quiet {
  bands: Set<number>;
  orders: readonly OrderView[];
  base?: Balance;
  quote?: Balance;
  rules: PairRules;
}

/**
 * What the grid derived for an instance, kept in memory by context (the engine keeps one context per
 * instance): all of it follows from params, state and the context, so none of it is persisted.
 */
class Memo {
  /** state.outside, read without going through the state's proxy on every tick (watchRange writes both). */
  outside: GridState['outside'];
  /** Slot holdings (text, as in state) rounded down to the pair's step. */
  readonly held = new Map<string, Dec>();
  /** The tags of the open orders last seen, by the identity of the engine's open-orders array. */
  openOrders: readonly OrderView[] | undefined = undefined;
  openTags: ReadonlySet<string | undefined> | undefined = undefined;
  /** Same inputs as quiet ticks saw, same (empty) outcome. */
  quiet: Quiet | undefined = undefined;

  constructor(
    /** The state object the memo was built from (a restart loads a new one). */
    readonly state: GridState,
    readonly rules: PairRules,
    readonly ladder: Ladder,
  ) {
    this.outside = state.outside;
  }
}
const memos = new WeakMap<object, Memo>();

/** The ladder's geometry for this instance; undefined until a reference price is known. */
function ladder(ctx: Ctx): Ladder | undefined {
  return memo(ctx)?.ladder;
}

function memo(ctx: Ctx): Memo | undefined {
  const known = memos.get(ctx);
  // Params never change and state.reference is written once, in build: same state and rules, same memo.
  return known?.state === ctx.state && known.rules === ctx.rules ? known : build(ctx);
}

function build(ctx: Ctx): Memo | undefined {
  const { params: p, state, rules } = ctx;
  let reference = p.referencePrice?.toFixed() ?? state.reference;
  if (reference === undefined) {
    if (ctx.price === undefined) return undefined;
    reference = state.reference = ctx.price.toFixed();
    ctx.log.info('grid centred on the first price', { reference });
  }
  const ref = dec(reference);
  const step = p.spacingAbs ?? ref.mul(p.spacingPct!).div(100);
  const built = new Memo(state, rules, new Ladder(p.levels, ref, step, p, rules));
  memos.set(ctx, built);
  return built;
}

/**
 * The index k of the levels the price lies strictly between (level k below, k + 1 above), or undefined when
 * it sits on a level or too near one to tell in floating point: then only the exact comparisons decide.
 */
function bandOf(grid: Ladder, price: number): number | undefined {
  const x = (price - grid.referenceNumber) / grid.stepNumber;
  const k = Math.floor(x);
  return x - k < 1e-9 || k + 1 - x < 1e-9 ? undefined : k;
}

function slotsOf(ctx: Ctx, grid: Ladder): Record<string, Slot> {
  if (ctx.state.slots) return ctx.state.slots;
  const slots: Record<string, Slot> = {};
  // Seed the slots just above the reference with initialBase, nearest first, one order's worth each.
  let seed = ctx.params.initialBase ?? new D(0);
  for (let j = 0; j < grid.levels && seed.gt(0); j++) {
    const held = D.min(seed, grid.quantityAt(grid.level(j + 1).price));
    slots[j] = { held: held.toFixed(), cost: '0' };
    seed = seed.minus(held);
  }
  ctx.state.slots = slots;
  return slots;
}

const NOTHING = new D(0);

/** What a slot can sell at `price` after rounding to the pair's step; zero for dust the pair would reject. */
function sellable(m: Memo, slot: Slot | undefined, price: Dec): Dec {
  if (!slot) return NOTHING;
  let qty = m.held.get(slot.held);
  if (qty === undefined) m.held.set(slot.held, (qty = floorTo(dec(slot.held), m.rules.stepSize)));
  if (qty.lte(0) || qty.lt(m.rules.minQty) || qty.mul(price).lt(m.rules.minNotional)) return NOTHING;
  return qty;
}

function openTags(m: Memo, orders: readonly OrderView[]): ReadonlySet<string | undefined> {
  if (m.openOrders !== orders || !m.openTags) {
    m.openTags = new Set(orders.map((o) => o.tag));
    m.openOrders = orders;
  }
  return m.openTags;
}

function watchRange(ctx: Ctx, m: Memo, price: Dec): void {
  const grid = m.ladder;
  const side = price.gt(grid.level(grid.levels).price)
    ? 'above'
    : price.lt(grid.level(-grid.levels).price)
      ? 'below'
      : undefined;
  if (m.outside === side) return; // written only on a change: an unchanged state costs no save
  m.outside = side;
  if (side === undefined) {
    delete ctx.state.outside;
    return;
  }
  ctx.log.info(`price left the grid ${side} its range: waiting, not chasing`, { price: price.toFixed() });
  ctx.state.outside = side;
}

/** Slot j (buying at level j, selling at j + 1) has its order open or pending. */
function armed(grid: Ladder, open: ReadonlySet<string | undefined>, j: number): boolean {
  return open.has(grid.level(j).buyTag) || open.has(grid.level(j + 1).sellTag);
}

/** Quote tied up: what open buys still wait to spend, plus what the base held cost. */
function committedQuote(ctx: Ctx, slots: Record<string, Slot>): Dec {
  let sum = new D(0);
  for (const o of ctx.openOrders) {
    if (o.side === 'BUY' && o.price) sum = sum.plus(o.price.mul(o.quantity.minus(o.filledQuantity)));
  }
  for (const slot of Object.values(slots)) sum = sum.plus(slot.cost);
  return sum;
}

/**
 * Make sure every slot that should have an order has one; never duplicates an open or pending order.
 * Returns how many orders it placed.
 */
function arm(ctx: Ctx): number {
  const m = memo(ctx);
  const price = ctx.price;
  if (!m || !price) return 0;
  const grid = m.ladder;
  let placed = 0;
  const slots = slotsOf(ctx, grid);
  watchRange(ctx, m, price);
  const open = openTags(m, ctx.openOrders);
  // Balances guard against intents the engine would only refuse for insufficient funds, tick after tick.
  let freeBase = ctx.balances.get(ctx.rules.baseAsset)?.free;
  let freeQuote = ctx.balances.get(ctx.rules.quoteAsset)?.free;

  for (let j = -grid.levels; j < grid.levels; j++) {
    if (armed(grid, open, j)) continue;
    const at = grid.level(j + 1).price;
    const qty = sellable(m, slots[j], at);
    if (qty.isZero()) continue;
    if (freeBase !== undefined && qty.gt(freeBase)) {
      noticeOnce(ctx, `base:${j}`, 'not enough free base for a grid sell: waiting', {
        level: j + 1,
        quantity: qty.toFixed(),
      });
      continue;
    }
    // The sell closes the slot's own buy: closed trades pair the two (not the level's sale with another's buy).
    ctx.limit('SELL', at, qty, { tag: grid.level(j + 1).sellTag, closes: grid.level(j).buyTag });
    placed++;
    freeBase = freeBase?.minus(qty);
  }

  // Summed only when a buy is about to be weighed against the budget: most calls find every level armed.
  let committed: Dec | undefined;

  // Nearest level below the market first, so that a tight budget buys closest to the price.
  for (let j = grid.levels - 1; j >= -grid.levels; j--) {
    const level = grid.level(j);
    const slot = slots[j];
    if (j >= 0 && slot === undefined) continue; // above the reference only seeded slots trade
    if (armed(grid, open, j) || level.price.gte(price) || level.price.lte(0)) continue;
    if (!sellable(m, slot, grid.level(j + 1).price).isZero()) continue;
    if (level.small) {
      noticeOnce(ctx, `small:${j}`, 'grid order below the pair minimums: level skipped', {
        level: j,
        quantity: level.bidQty.toFixed(),
      });
      continue;
    }
    const cost = level.bidCost;
    committed ??= committedQuote(ctx, slots);
    if (ctx.params.budgetQuote && committed.plus(cost).gt(ctx.params.budgetQuote)) {
      noticeOnce(ctx, 'budget', 'grid budget fully committed: further buys wait for sells', {
        budgetQuote: ctx.params.budgetQuote.toFixed(),
      });
      break;
    }
    if (freeQuote !== undefined && cost.gt(freeQuote)) {
      noticeOnce(ctx, 'quote', 'not enough free quote for a grid buy: waiting', { level: j, cost: cost.toFixed() });
      break;
    }
    ctx.limit('BUY', level.bid, level.bidQty, { tag: level.buyTag });
    placed++;
    committed = committed.plus(cost);
    freeQuote = freeQuote?.minus(cost);
  }
  return placed;
}

/** Which side of the range band k lies outside of (see watchRange), or undefined inside it. */
function sideOf(grid: Ladder, band: number): GridState['outside'] {
  return band >= grid.levels ? 'above' : band < -grid.levels ? 'below' : undefined;
}

/** A hair inside a level (a relative 1e-12): a level is an exact decimal, the price it is compared with a double. */
const HAIR = 1e-12;

/**
 * Tells the engine the prices at which this quiet call's outcome stays the same (ctx.quietBetween): arm() reads the
 * price only through which side of the range's two edges and of each unarmed slot's buy level it lies (an armed
 * slot places nothing wherever the price is), so the band runs from the nearest of those levels below the price
 * to the nearest above, a hair inside each. None when the price sits on one of them.
 */
function declareQuiet(ctx: Ctx, m: Memo, p: number): void {
  const grid = m.ladder;
  const open = openTags(m, ctx.openOrders);
  const slots = ctx.state.slots;
  let low = -Infinity;
  let high = Infinity;
  for (let j = -grid.levels; j <= grid.levels; j++) {
    const edge = j === -grid.levels || j === grid.levels;
    if (!edge && (armed(grid, open, j) || (j >= 0 && slots?.[j] === undefined))) continue;
    const x = grid.level(j).value;
    if (x === p) return;
    if (x < p && x > low) low = x;
    if (x > p && x < high) high = x;
  }
  ctx.quietBetween(low * (1 + HAIR), high * (1 - HAIR));
}

/**
 * The tick path. arm() depends on the price only through which levels it lies between, and otherwise on the
 * open orders, the free balances, the pair rules and the slots (changed only by fills, which re-arm in
 * onFill). The engine hands out the same open-orders array and balance entries until they change, so while
 * all of that stays as quiet ticks saw it, a tick in a band one of them saw would place nothing too and is
 * skipped: no decimal maths on the ticks where nothing happens (the vast majority in a backtest, where the
 * price moves back and forth over a few bands between fills). A tick that would cross the range's edge runs
 * arm() all the same, which notes the side (logged once per crossing).
 */
function onTick(ctx: Ctx): void {
  const m = memo(ctx);
  const p = ctx.ticker?.last;
  if (!m || p === undefined) return;
  const band = bandOf(m.ladder, p);
  const orders = ctx.openOrders;
  const base = ctx.balances.get(ctx.rules.baseAsset);
  const quote = ctx.balances.get(ctx.rules.quoteAsset);
  let q = m.quiet;
  if (q !== undefined && (q.orders !== orders || q.base !== base || q.quote !== quote || q.rules !== ctx.rules)) {
    q = m.quiet = undefined;
  }
  if (band !== undefined && q?.bands.has(band) && sideOf(m.ladder, band) === m.outside) {
    declareQuiet(ctx, m, p);
    return;
  }
  const placed = arm(ctx);
  if (placed > 0) m.quiet = undefined;
  else if (band === undefined)
    return; // learnt nothing: the exact comparisons decided
  else {
    if (q !== undefined) q.bands.add(band);
    else m.quiet = { bands: new Set([band]), orders, base, quote, rules: ctx.rules };
    declareQuiet(ctx, m, p);
  }
}

/** Book a fill into its slot: a buy adds base and cost, a sell removes base and its share of the cost. */
function book(ctx: Ctx, fill: FillView): void {
  const m = TAG.exec(fill.order.tag ?? '');
  const grid = ladder(ctx);
  if (!m || !grid) return;
  const level = Number(m[1]);
  const slots = slotsOf(ctx, grid);
  const key = String(m[2] === 'buy' ? level : level - 1);
  const slot = (slots[key] ??= { held: '0', cost: '0' });
  const baseFee = fill.feeAsset === ctx.rules.baseAsset ? fill.fee : new D(0);
  const quoteFee = fill.feeAsset === ctx.rules.quoteAsset ? fill.fee : new D(0);
  const held = dec(slot.held);
  if (fill.side === 'BUY') {
    slot.held = held.plus(fill.quantity).minus(baseFee).toFixed();
    slot.cost = dec(slot.cost).plus(fill.price.mul(fill.quantity)).plus(quoteFee).toFixed();
  } else {
    const left = D.max(held.minus(fill.quantity).minus(baseFee), 0);
    slot.cost = held.gt(0) ? dec(slot.cost).mul(left).div(held).toFixed() : '0';
    slot.held = left.toFixed();
  }
}

export default defineStrategy<typeof params, GridState>({
  name: 'grid',
  description: 'LIMIT ladder around a reference price; each fill re-arms the opposite side one level away',
  params,
  orderTypes: ['LIMIT'],
  requiresCancel: false,
  // onTick reads its context only (no clock), keeps only caches of it (Memo), and changes state only by its keys.
  idempotentTick: true,
  onTick,
  onFill(ctx, fill) {
    book(ctx, fill);
    arm(ctx);
    const m = memos.get(ctx);
    if (m) m.quiet = undefined;
  },
});
