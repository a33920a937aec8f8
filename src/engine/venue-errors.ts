/**
 * What a venue error means for an order, decided once and by duck typing on `code` (and `exchangeCode`,
 * `sent`, `status`), never by class: the engine must not know which adapter threw.
 */
export interface VenueErrorInfo {
  /** The adapter's stable code (E_EXCHANGE, E_OUTCOME_UNKNOWN, E_NETWORK…), or E_UNEXPECTED. */
  code: string;
  exchangeCode: number | string | undefined;
  httpStatus: number | undefined;
  /** E_NETWORK with sent: false — the request certainly never left. */
  notSent: boolean;
  message: string;
}

function field(err: unknown, name: string): unknown {
  return typeof err === 'object' && err !== null ? (err as Record<string, unknown>)[name] : undefined;
}

export function venueErrorInfo(err: unknown): VenueErrorInfo {
  const code = field(err, 'code');
  const exchangeCode = field(err, 'exchangeCode');
  const status = field(err, 'status');
  return {
    code: typeof code === 'string' ? code : 'E_UNEXPECTED',
    exchangeCode: typeof exchangeCode === 'number' || typeof exchangeCode === 'string' ? exchangeCode : undefined,
    httpStatus: typeof status === 'number' ? status : undefined,
    notSent: code === 'E_NETWORK' && field(err, 'sent') === false,
    message: err instanceof Error ? err.message : String(err),
  };
}

/**
 * How a failed create ended. REJECTED and NOT_SENT are certain: no order exists. Everything else (timeouts,
 * resets after sending, 5xx, rate limits, unreadable answers, errors nobody classified) may have placed the
 * order, so it is UNKNOWN and resolved from open orders and history — never by sending again (invariant 3).
 */
export type CreateOutcome = 'REJECTED' | 'NOT_SENT' | 'UNKNOWN';

export function createOutcome(info: VenueErrorInfo): CreateOutcome {
  if (info.code === 'E_EXCHANGE' || info.code === 'E_AUTH') return 'REJECTED';
  if (info.notSent) return 'NOT_SENT';
  // A 4xx other than timeout/rate limit is the gateway refusing the request as malformed: nothing was placed.
  if (info.code === 'E_HTTP' && info.httpStatus !== undefined && info.httpStatus >= 400 && info.httpStatus < 500) {
    if (info.httpStatus !== 408 && info.httpStatus !== 429) return 'REJECTED';
  }
  return 'UNKNOWN';
}

/** 401: credentials or clock are wrong; trading stops and the operator is told. */
export function isAuthError(info: VenueErrorInfo): boolean {
  return info.code === 'E_AUTH';
}
