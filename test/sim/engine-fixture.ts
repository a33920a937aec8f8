import { expect } from 'vitest';
import { MatchingEngine, type MatchingEngineOptions } from '../../src/sim/matching-engine.js';
import { SimRejectError, type SimRejectReason, SIM_ERROR_CODES } from '../../src/sim/error-codes.js';
import type { SimOrderInput } from '../../src/sim/order-input.js';

export const KEY = 'test-key';
export const T0 = Date.parse('2024-05-01T00:00:00.000Z');

/** An engine with one account (100000 USDT, 50000 USDC, 2 BTC) and BTCUSDT last traded at 60000 at T0. */
export function engineAt(price: number | null = 60000, options: MatchingEngineOptions = {}): MatchingEngine {
  const engine = new MatchingEngine(options);
  engine.createAccount({ apiKey: KEY, balances: { USDT: '100000', USDC: '50000', BTC: '2' } });
  if (price !== null) engine.onPrice('BTCUSDT', price, T0);
  return engine;
}

export function place(engine: MatchingEngine, order: Omit<SimOrderInput, 'symbol'> & { symbol?: string }) {
  return engine.placeOrder(KEY, { symbol: 'BTCUSDT', ...order });
}

/** Free and locked of an asset as plain decimal text, for exact comparisons. */
export function bal(engine: MatchingEngine, asset: string): [string, string] {
  const b = engine.balanceOf(KEY, asset);
  return [b.free.toFixed(), b.locked.toFixed()];
}

export function rejection(fn: () => unknown): SimRejectError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(SimRejectError);
    return err as SimRejectError;
  }
  throw new Error('expected a rejection, none came');
}

export function expectReject(fn: () => unknown, reason: SimRejectReason): SimRejectError {
  const err = rejection(fn);
  expect(err.reason).toBe(reason);
  expect(err.exchangeCode).toBe(SIM_ERROR_CODES[reason]);
  expect(err.code).toBe('E_EXCHANGE');
  return err;
}
