/**
 * Risk: per-instance limits from the strategy file, and the two engine-wide brakes (kill switch, circuit
 * breaker). Each check answers with the reason for a refusal, or undefined when the order may go.
 */
import { existsSync } from 'node:fs';
import type { RiskLimits } from '../config/strategy-file.js';
import type { Dec } from '../market/decimal.js';
import { rounder } from '../market/display.js';
import type { PairRules } from '../market/pair-rules.js';
import type { Side } from '../market/pair-rules.js';

export interface RiskCheckInput {
  limits: RiskLimits;
  side: Side;
  /** Base quantity of the new order (estimated at the last price for a MARKET order by quote amount). */
  quantity: Dec;
  /** Quote value of the new order at its worst price. */
  notional: Dec;
  /** The instance's net base position from its fills. */
  position: Dec;
  /** Unfilled base quantity of the instance's live orders, per side. */
  openBuy: Dec;
  openSell: Dec;
  openCount: number;
  /** Realised PnL of the instance on the current UTC day. */
  realisedToday: Dec;
  /** The pair's rules, to round the figures a reason gives (8 places without them). */
  rules?: PairRules;
}

/** An order is an exit only when it reduces the position without reversing it; anything else is an entry. */
export function isEntry(side: Side, quantity: Dec, position: Dec): boolean {
  if (side === 'SELL') return !(position.isPos() && quantity.lte(position));
  return !(position.isNeg() && quantity.lte(position.neg()));
}

/** Which limit refused an order: the order manager switches on it (a daily loss is reported once a day). */
export type RiskLimitKind = 'order-value' | 'open-orders' | 'position' | 'daily-loss';

/** A refusal by the instance's risk limits: which one, and the reason people read. */
export interface RiskRefusal {
  kind: RiskLimitKind;
  reason: string;
}

export function riskProblem(input: RiskCheckInput): RiskRefusal | undefined {
  const { limits } = input;
  // A reason is read by people (log, chat, API): figures derived by division are rounded, the limits are as given.
  const shown = rounder(input.rules);
  if (limits.maxOrderNotional && input.notional.gt(limits.maxOrderNotional))
    return {
      kind: 'order-value',
      reason: `order value ${input.notional.toFixed()} exceeds maxOrderNotional ${limits.maxOrderNotional.toFixed()}`,
    };
  if (limits.maxOpenOrders !== undefined && input.openCount + 1 > limits.maxOpenOrders)
    return {
      kind: 'open-orders',
      reason: `${input.openCount} orders already open, maxOpenOrders is ${limits.maxOpenOrders}`,
    };
  if (limits.maxPosition) {
    // Worst case: every live order on this side fills too.
    const worst =
      input.side === 'BUY'
        ? input.position.plus(input.openBuy).plus(input.quantity)
        : input.position.minus(input.openSell).minus(input.quantity);
    if (worst.abs().gt(limits.maxPosition) && worst.abs().gt(input.position.abs()))
      return {
        kind: 'position',
        reason: `position could reach ${shown.baseAsset(worst)} (with open orders), maxPosition is ${limits.maxPosition.toFixed()}`,
      };
  }
  if (
    limits.dailyLossLimit &&
    input.realisedToday.lte(limits.dailyLossLimit.neg()) &&
    isEntry(input.side, input.quantity, input.position)
  )
    return {
      kind: 'daily-loss',
      reason: `daily loss limit reached (realised ${shown.quote(input.realisedToday)} today, limit ${limits.dailyLossLimit.toFixed()}): no new entries until the next UTC day`,
    };
  return undefined;
}

/**
 * Stops new orders while a file exists (the operator layer creates and removes it). `poll` reports each change
 * once, so it can be logged and recorded when it turns on and when it turns off.
 */
export class KillSwitch {
  private last = false;

  constructor(private readonly file: string | undefined) {}

  isOn(): boolean {
    return this.file !== undefined && existsSync(this.file);
  }

  /** The current state, and whether it changed since the previous poll. */
  poll(): { on: boolean; changed: boolean } {
    const on = this.isOn();
    const changed = on !== this.last;
    this.last = on;
    return { on, changed };
  }

  describe(): string {
    return `kill switch file ${this.file ?? ''} exists`;
  }
}

export interface CircuitBreakerOptions {
  /** Consecutive venue errors that trip it. */
  threshold: number;
  /** Pause after the first trip; doubles with each trip that follows without a success in between. */
  baseBackoffMs: number;
  maxBackoffMs: number;
}

export const DEFAULT_CIRCUIT_BREAKER: CircuitBreakerOptions = {
  threshold: 5,
  baseBackoffMs: 30_000,
  maxBackoffMs: 900_000,
};

export type BreakerChange = { kind: 'tripped'; until: number; trips: number; errors: number } | { kind: 'closed' };

/**
 * Pauses trading after N consecutive venue errors. Once the backoff has passed, the next call is a probe:
 * a success closes the breaker (and resets the backoff), an error trips it again for twice as long. A venue
 * that has answered N calls in a row (reads go on while orders are paused) closes it early, once at least the
 * base backoff has passed since the last trip: a long outage doubles the backoff, but trading still resumes
 * within the base backoff (plus N reads) of the venue being healthy again.
 */
export class CircuitBreaker {
  private consecutive = 0;
  private trips = 0;
  private openUntil: number | undefined;
  private trippedAt = 0;
  private successes = 0;

  constructor(private readonly options: CircuitBreakerOptions) {}

  /** The time trading may resume, while the breaker is open. */
  blockedUntil(now: number): number | undefined {
    return this.openUntil !== undefined && now < this.openUntil ? this.openUntil : undefined;
  }

  onSuccess(now: number): BreakerChange | undefined {
    this.consecutive = 0;
    if (this.openUntil === undefined) return undefined;
    this.successes++;
    const healthy = this.successes >= this.options.threshold && now >= this.trippedAt + this.options.baseBackoffMs;
    if (now >= this.openUntil || healthy) {
      this.openUntil = undefined;
      this.trips = 0;
      this.successes = 0;
      return { kind: 'closed' };
    }
    return undefined;
  }

  onFailure(now: number): BreakerChange | undefined {
    this.consecutive++;
    this.successes = 0;
    if (this.blockedUntil(now) !== undefined) return undefined;
    const probeFailed = this.openUntil !== undefined;
    if (!probeFailed && this.consecutive < this.options.threshold) return undefined;
    const errors = this.consecutive;
    this.trips++;
    const backoff = Math.min(this.options.baseBackoffMs * 2 ** (this.trips - 1), this.options.maxBackoffMs);
    this.openUntil = now + backoff;
    this.trippedAt = now;
    this.consecutive = 0;
    return { kind: 'tripped', until: this.openUntil, trips: this.trips, errors };
  }
}
