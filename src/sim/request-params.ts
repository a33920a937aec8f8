/**
 * The parameters of a request to the simulated exchange: the query string, and for POST and DELETE the JSON
 * body too (public clients send the same fields in both, exchange-notes.md). Rules where the exchange is silent:
 * - Query values are percent-decoded with decodeURIComponent ('+' stays '+'); a name given twice is refused.
 * - A field in both the query and the body must agree (same text; a body number equal to the query's number;
 *   a body boolean equal to the query's true/false), else the request is refused naming the field. The query's
 *   text is what the engine gets; a field only in the body is taken from there (only the query is signed, as on
 *   the exchange). A null in the body counts as absent.
 * - Every endpoint lists the names it takes; any other name is refused, so a client bug shows at once.
 * Every refusal is INVALID_QUERY (6120) naming the parameter.
 */
import { SimRejectError } from './error-codes.js';

export type ParamValue = string | number | boolean;

function invalid(field: string, message: string): SimRejectError {
  return new SimRejectError('INVALID_QUERY', message, { field });
}

/** Decoded query parameters by name, in received order. */
export function parseQuery(rawQuery: string): Map<string, string> {
  const out = new Map<string, string>();
  if (rawQuery === '') return out;
  for (const pair of rawQuery.split('&')) {
    const eq = pair.indexOf('=');
    const rawName = eq < 0 ? pair : pair.slice(0, eq);
    const rawValue = eq < 0 ? '' : pair.slice(eq + 1);
    let name: string;
    let value: string;
    try {
      name = decodeURIComponent(rawName);
      value = decodeURIComponent(rawValue);
    } catch {
      throw invalid(rawName, `query parameter ${JSON.stringify(rawName)} is not valid percent-encoding`);
    }
    if (out.has(name)) throw invalid(name, `query parameter ${name} is given twice`);
    out.set(name, value);
  }
  return out;
}

/** The JSON body as an object of fields; an empty body has none. */
export function parseBody(text: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw invalid('body', `request body is not valid JSON (${(err as Error).message})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalid('body', 'request body must be a JSON object of fields');
  return value as Record<string, unknown>;
}

function agrees(query: string, body: ParamValue): boolean {
  if (typeof body === 'string') return query === body;
  if (typeof body === 'boolean') return query === String(body);
  return /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(query) && Number(query) === body;
}

function bodyValue(name: string, value: unknown): ParamValue | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  throw invalid(
    name,
    `body field ${name} must be text, a number or a boolean, got ${Array.isArray(value) ? 'an array' : typeof value}`,
  );
}

/** The parameters an endpoint takes, typed on demand. */
export class Params {
  private readonly values = new Map<string, ParamValue>();

  /** `allowed`: every name the endpoint takes (timestamp and signature included for private endpoints). */
  constructor(query: Map<string, string>, body: Record<string, unknown>, allowed: ReadonlySet<string>) {
    for (const [name, value] of query) {
      if (!allowed.has(name)) throw invalid(name, `unknown query parameter ${JSON.stringify(name)}`);
      this.values.set(name, value);
    }
    for (const [name, raw] of Object.entries(body)) {
      if (!allowed.has(name)) throw invalid(name, `unknown body field ${JSON.stringify(name)}`);
      const value = bodyValue(name, raw);
      if (value === undefined) continue;
      const fromQuery = query.get(name);
      if (fromQuery === undefined) this.values.set(name, value);
      else if (!agrees(fromQuery, value))
        throw invalid(
          name,
          `${name} differs between query (${JSON.stringify(fromQuery)}) and body (${JSON.stringify(value)})`,
        );
    }
  }

  /** Text as received; a JSON number from the body (an id, say) as its decimal text. */
  text(name: string): string | undefined {
    const v = this.values.get(name);
    if (v === undefined || typeof v === 'string') return v;
    if (typeof v === 'number') return String(v);
    throw invalid(name, `${name} must be text, got a boolean`);
  }

  /** Text that must be present: MISSING_FIELD otherwise. */
  required(name: string): string {
    const v = this.text(name);
    if (v === undefined || v === '') throw new SimRejectError('MISSING_FIELD', `${name} is required`, { field: name });
    return v;
  }

  bool(name: string): boolean | undefined {
    const v = this.values.get(name);
    if (v === undefined || typeof v === 'boolean') return v;
    if (v === 'true' || v === 'false') return v === 'true';
    throw invalid(name, `${name} must be true or false, got ${JSON.stringify(v)}`);
  }

  int(name: string): number | undefined {
    const v = this.values.get(name);
    if (v === undefined) return undefined;
    const n = typeof v === 'string' && /^-?\d{1,15}$/.test(v) ? Number(v) : v;
    if (typeof n === 'number' && Number.isSafeInteger(n)) return n;
    throw invalid(name, `${name} must be an integer, got ${JSON.stringify(v)}`);
  }

  /** An order amount exactly as received (text, or a JSON number from the body): the engine validates it. */
  amount(name: string): string | number | undefined {
    const v = this.values.get(name);
    if (typeof v === 'boolean') throw invalid(name, `${name} must be a number, got a boolean`);
    return v;
  }
}
