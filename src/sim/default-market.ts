/**
 * The simulated exchange's default assets and pairs, shared by tests, the server and `npm start`:
 *
 * | asset | id |     | pair    | base/quote | tickSize | minPrice | maxPrice  | base precision | quote precision |
 * |-------|----|-----|---------|------------|----------|----------|-----------|----------------|-----------------|
 * | BTC   | 1  |     | BTCUSDT | BTC/USDT   | 0.01     | 0.01     | 1000000   | 6              | 2               |
 * | USDT  | 2  |     | BTCUSDC | BTC/USDC   | 0.01     | 0.01     | 1000000   | 6              | 2               |
 * | USDC  | 3  |     | ETHUSDT | ETH/USDT   | 0.01     | 0.01     | 1000000   | 5              | 2               |
 * | ETH   | 4  |
 *
 * Every default pair is TRADING, allows LIMIT, MARKET, STOP_LIMIT and OCO, and has only a PRICE_FILTER
 * (quantities are bounded by the base precision alone). Timestamps are fixed so records are reproducible.
 */
import type { PairConfig } from '../ports/venue-records.js';

export interface SimAsset {
  id: number;
  code: string;
}

export const DEFAULT_ASSETS: readonly SimAsset[] = [
  { id: 1, code: 'BTC' },
  { id: 2, code: 'USDT' },
  { id: 3, code: 'USDC' },
  { id: 4, code: 'ETH' },
];

const FIXED_TIME = '2024-01-01T00:00:00.000Z';

export interface SimPairOptions {
  baseAssetPrecision?: number;
  quotePrecision?: number;
  tickSize?: number;
  minPrice?: number;
  maxPrice?: number;
  status?: string;
  orderTypes?: string[];
  ocoAllowed?: boolean;
  /** LOT_SIZE, only when any is given (else quantities are bounded by the base precision alone). */
  minQty?: number | string;
  maxQty?: number | string;
  stepSize?: number | string;
  /** MIN_NOTIONAL, only when given. */
  minNotional?: number | string;
}

/** A pair configuration in the exchange's shape (spot-api.md), from two assets and a few overrides. */
export function simPairConfig(base: SimAsset, quote: SimAsset, options: SimPairOptions = {}): PairConfig {
  const orderTypes = options.orderTypes ?? ['LIMIT', 'MARKET', 'STOP_LIMIT', 'OCO'];
  const basePrecision = options.baseAssetPrecision ?? 6;
  const quotePrecision = options.quotePrecision ?? 2;
  return {
    symbol: `${base.code}${quote.code}`,
    status: options.status ?? 'TRADING',
    baseAsset: base.code,
    baseAssetPrecision: basePrecision,
    quoteAsset: quote.code,
    quotePrecision,
    baseCommissionPrecision: basePrecision,
    quoteCommissionPrecision: quotePrecision,
    orderTypes,
    icebergAllowed: false,
    ocoAllowed: options.ocoAllowed ?? orderTypes.includes('OCO'),
    quoteOrderQtyMarketAllowed: true,
    isSpotTradingAllowed: true,
    isMarginTradingAllowed: false,
    filters: [
      {
        filterType: 'PRICE_FILTER',
        minPrice: options.minPrice ?? 0.01,
        maxPrice: options.maxPrice ?? 1000000,
        tickSize: options.tickSize ?? 0.01,
      },
      ...(options.minQty !== undefined || options.stepSize !== undefined || options.maxQty !== undefined
        ? [
            {
              filterType: 'LOT_SIZE',
              minQty: options.minQty ?? 0,
              maxQty: options.maxQty ?? 0,
              stepSize: options.stepSize ?? 0,
            },
          ]
        : []),
      ...(options.minNotional !== undefined ? [{ filterType: 'MIN_NOTIONAL', minNotional: options.minNotional }] : []),
    ],
    permissions: ['SPOT'],
    baseAssetId: base.id,
    quoteAssetId: quote.id,
    liquidityBroker: 'SIMULATED',
    createdAt: FIXED_TIME,
    updatedAt: FIXED_TIME,
  };
}

function asset(code: string): SimAsset {
  const found = DEFAULT_ASSETS.find((a) => a.code === code);
  if (!found) throw new Error(`default asset ${code} missing`);
  return found;
}

export const DEFAULT_PAIRS: readonly PairConfig[] = [
  simPairConfig(asset('BTC'), asset('USDT')),
  simPairConfig(asset('BTC'), asset('USDC')),
  simPairConfig(asset('ETH'), asset('USDT'), { baseAssetPrecision: 5 }),
];
