/**
 * Figures rounded for people (the API, `bot status`, the chat, notifications), never by float arithmetic: exact
 * decimals rounded half to even to the pair's precision, as plain text. The journal keeps every digit; only
 * what is shown is rounded. Without the pair's rules (a pair the process has not loaded), 8 places.
 */
import { type Dec, type DecimalLike, dec, plain } from './decimal.js';
import type { PairRules } from './pair-rules.js';

/** Places shown when the pair's rules are not known. */
export const FALLBACK_PLACES = 8;

/** A figure rounded to `places` decimals, as plain text (`-0` is `0`). */
export function roundedText(x: DecimalLike, places: number = FALLBACK_PLACES): string {
  return plain(dec(x).toDecimalPlaces(places));
}

const decimalsOf = (step: Dec): number => Math.max(0, step.decimalPlaces());

/** Which asset an amount is in, relative to its pair. */
export type AmountIn = 'base' | 'quote' | 'other';

/** Rounds a pair's figures for people. */
export function rounder(rules: PairRules | undefined) {
  const places = (p: number | undefined) => (d: DecimalLike) => roundedText(d, p ?? FALLBACK_PLACES);
  const baseAsset = places(rules?.baseAssetPrecision);
  const quote = places(rules?.quotePrecision);
  return {
    /** A quantity traded (an order's or a trade's): to the pair's step. */
    base: places(rules === undefined ? undefined : decimalsOf(rules.stepSize)),
    /** A price: to the pair's tick. */
    price: places(rules === undefined ? undefined : decimalsOf(rules.tickSize)),
    /** An amount of the quote asset (PnL, value, a quote fee): to its precision. */
    quote,
    /** An amount of the base asset held (a position, a base fee): to its precision, dust below the step shown. */
    baseAsset,
    /** An amount in the pair's base or quote asset, or another (a fee paid in a third asset: 8 places). */
    amount: (d: DecimalLike, asset: AmountIn) =>
      asset === 'base' ? baseAsset(d) : asset === 'quote' ? quote(d) : roundedText(d),
  };
}

/**
 * Display places of each asset from the pairs given: a base asset's precision, a quote asset's precision (the
 * larger where pairs differ).
 */
export function assetPlaces(pairs: readonly (PairRules | undefined)[]): Map<string, number> {
  const out = new Map<string, number>();
  const put = (asset: string, p: number) => out.set(asset, Math.max(p, out.get(asset) ?? 0));
  for (const r of pairs) {
    if (r === undefined) continue;
    put(r.baseAsset, r.baseAssetPrecision);
    put(r.quoteAsset, r.quotePrecision);
  }
  return out;
}

/** A value as one CSV cell (RFC 4180): quoted, its quotes doubled, where it holds a comma, quote or line break. */
export function csvCell(value: string | number | boolean | undefined): string {
  if (value === undefined) return '';
  const text = String(value);
  return /[",\n\r]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
