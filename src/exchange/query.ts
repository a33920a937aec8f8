/**
 * Request parameters, written once into the two forms that leave the process: query-string text and JSON
 * body text. Strict writer: every value is checked here, before any I/O, and an invalid one is refused with
 * an error naming the field.
 *
 * Encoding rule (the exchange does not document one): text values are URL-encoded with encodeURIComponent
 * BEFORE signing, so the signed string is byte for byte the string on the wire. Decimal values are written
 * verbatim; integers as their exact digits; booleans as true/false.
 */
import { isPlainDecimal } from '../market/decimal.js';
import { RequestParamError } from './errors.js';

export interface Param {
  readonly name: string;
  /** The value as it appears in the query string (already URL-encoded). */
  readonly wire: string;
  /** The value as a JSON literal for the mirrored body. */
  readonly json: string;
}

/** A positive plain decimal that is also a valid JSON number (no leading zeros): what the exchange accepts. */
const JSON_DECIMAL = /^(0|[1-9]\d*)(\.\d+)?$/;

export function decimalParam(endpoint: string, name: string, value: string): Param {
  if (!isPlainDecimal(value) || !JSON_DECIMAL.test(value) || /^0(\.0+)?$/.test(value)) {
    throw new RequestParamError(
      endpoint,
      name,
      `must be a plain positive decimal (digits and an optional fraction, no exponent or leading zeros), got '${value}'`,
    );
  }
  return { name, wire: value, json: value };
}

export function textParam(endpoint: string, name: string, value: string): Param {
  if (value === '') throw new RequestParamError(endpoint, name, 'must not be empty');
  return { name, wire: encodeURIComponent(value), json: JSON.stringify(value) };
}

export function integerParam(endpoint: string, name: string, value: number): Param {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RequestParamError(endpoint, name, `must be a non-negative integer, got ${value}`);
  }
  // A safe integer prints exactly and never in exponent form; plain() would round it to 15 digits.
  const text = String(value);
  return { name, wire: text, json: text };
}

export function booleanParam(name: string, value: boolean): Param {
  const text = value ? 'true' : 'false';
  return { name, wire: text, json: text };
}

/** An ISO 8601 time (the history filters' timeFrom/timeTo), sent as text. */
export function timeParam(endpoint: string, name: string, value: string): Param {
  if (!/^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value) || Number.isNaN(Date.parse(value))) {
    throw new RequestParamError(endpoint, name, `must be an ISO 8601 time (e.g. 2024-05-01T00:00:00Z), got '${value}'`);
  }
  return textParam(endpoint, name, value);
}

/** `name=value` pairs in the given order, joined by `&`. */
export function queryText(params: readonly Param[]): string {
  return params.map((p) => `${p.name}=${p.wire}`).join('&');
}

/**
 * The JSON body written by hand so that numbers keep their plain decimal text: JSON.stringify would turn
 * 0.0000001 into 1e-7.
 */
export function jsonText(params: readonly Param[]): string {
  return `{${params.map((p) => `${JSON.stringify(p.name)}:${p.json}`).join(',')}}`;
}
