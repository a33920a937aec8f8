/**
 * The control API under /api/v1 (behind the token, see api-server.ts): the operator layer's queries as reads and
 * its actions as writes, each request checked with zod and every problem named (`query.limit`, `body.on`).
 * Reads never change anything; an action answers with what it did, or its stable error code.
 */
import { type Context, Hono } from 'hono';
import { z } from 'zod';
import { dec, plain } from '../market/decimal.js';
import { type ActionResult, OperatorError } from '../operator/actions.js';
import type { Operator } from '../operator/operator.js';
import { API_PRECISIONS, EVENT_KINDS } from '../operator/queries.js';
import { badRequest, body, fail, query, remoteAddress } from './responses.js';

const name = z.string().min(1).max(200);
const cursor = z.coerce
  .number({ error: 'expected a positive integer' })
  .int('expected a positive integer')
  .positive('expected a positive integer');
const limit = (max: number, fallback: number) =>
  z.coerce
    .number({ error: `expected an integer from 1 to ${max}` })
    .int()
    .min(1)
    .max(max)
    .default(fallback);
const decimalText = z
  .string({ error: 'expected a positive decimal as a string, like "20150.5"' })
  .regex(/^\d{1,20}(\.\d{1,20})?$/, 'expected a positive decimal as a string, like "20150.5"')
  .refine((s) => Number(s) > 0, 'expected a price above zero');
const OrdersQuery = z.strictObject({ instance: name.optional() });
const FillsQuery = z.strictObject({
  instance: name.optional(),
  before: cursor.optional(),
  limit: limit(500, 50),
  precision: z.enum(API_PRECISIONS).default('pair'),
});
const EventsQuery = z.strictObject({
  instance: name.optional(),
  kind: z.enum(EVENT_KINDS, { error: 'expected an event kind (see docs/operations.md)' }).optional(),
  before: cursor.optional(),
  limit: limit(500, 50),
});
const PnlQuery = z.strictObject({ instance: name.optional() });
const ChartQuery = z.strictObject({
  symbol: z.string().regex(/^[A-Z0-9]{2,20}$/, 'expected a symbol such as BTCUSDT'),
  since: cursor.optional(),
});
const TradesQuery = z.strictObject({ instance: name.optional(), before: cursor.optional(), limit: limit(500, 50) });
const ProfitQuery = z.strictObject({
  period: z.enum(['day', 'week', 'month'], { error: 'expected day, week or month' }).default('day'),
  limit: limit(366, 30),
});
const PauseBody = z.strictObject({ cancelOrders: z.boolean().optional() });
const OnOffBody = z.strictObject({ on: z.boolean({ error: 'expected true or false' }) });
const positiveDecimal = z.union(
  [
    decimalText,
    z
      .number()
      .positive()
      .transform((n) => plain(n)),
  ],
  { error: 'expected a positive decimal, like "20150.5"' },
);
const ExitBody = z.union(
  [z.strictObject({ type: z.literal('market') }), z.strictObject({ type: z.literal('limit'), price: positiveDecimal })],
  { error: 'expected {"type": "market"} or {"type": "limit", "price": "<decimal>"}' },
);
const EntryBody = z.union(
  [
    z.strictObject({ type: z.literal('market'), quoteAmount: positiveDecimal.optional() }),
    z.strictObject({ type: z.literal('limit'), price: positiveDecimal, quoteAmount: positiveDecimal.optional() }),
  ],
  {
    error:
      'expected {"type": "market"} or {"type": "limit", "price": "<decimal>"}, each with an optional "quoteAmount": "<decimal>"',
  },
);
const EmptyBody = z.strictObject({});

export function v1Routes(operator: Operator): Hono {
  const { read, act: actions } = operator;
  const v1 = new Hono();

  /** A query about one instance or all: its fields, or the answer refusing it (a bad field, an unknown instance). */
  const instanceQuery = <T extends z.ZodType<{ instance?: string | undefined }>>(c: Context, schema: T) => {
    const q = query(c, schema);
    if (!q.success) return { refused: badRequest(c, 'query', q.error) };
    const { instance } = q.data;
    if (!read.knownInstance(instance))
      return { refused: fail(c, 'E_UNKNOWN_INSTANCE', `no instance named ${JSON.stringify(instance)}`) };
    return { data: q.data };
  };
  /** Runs an operator action: its result, or its stable error code and message (and every problem). */
  const act = async (c: Context, action: () => Promise<ActionResult>) => {
    try {
      const result = await action();
      read.invalidate();
      return c.json({ ok: true, ...result });
    } catch (err) {
      if (err instanceof OperatorError) {
        read.invalidate();
        const { problems, details } = err;
        return fail(c, err.code, err.message, {
          ...(problems.length > 0 ? { problems } : {}),
          ...(details !== undefined ? { details } : {}),
        });
      }
      throw err;
    }
  };
  const by = (c: Context) => ({ source: `api ${remoteAddress(c)}` });

  v1.get('/status', (c) => {
    const { json, etag } = read.status();
    c.header('etag', etag);
    c.header('cache-control', 'no-cache');
    if (c.req.header('if-none-match') === etag) return c.body(null, 304);
    return c.body(json, 200, { 'content-type': 'application/json; charset=utf-8' });
  });
  v1.get('/daemon', (c) =>
    c.json({ ...read.daemon(), version: operator.build.version, revision: operator.build.revision ?? null }),
  );
  v1.get('/instances', (c) => c.json({ instances: read.instances() }));
  v1.get('/orders', (c) => {
    const q = instanceQuery(c, OrdersQuery);
    if (!q.data) return q.refused;
    return c.json({ orders: read.orders(q.data.instance) });
  });
  v1.get('/fills', (c) => {
    const q = instanceQuery(c, FillsQuery);
    if (!q.data) return q.refused;
    const page = read.fills(q.data);
    return c.json({ precision: q.data.precision, fills: page.items, next: page.next });
  });
  v1.get('/events', (c) => {
    const q = instanceQuery(c, EventsQuery);
    if (!q.data) return q.refused;
    const page = read.events(q.data);
    return c.json({ events: page.items, next: page.next });
  });
  v1.get('/pnl', (c) => {
    const q = instanceQuery(c, PnlQuery);
    if (!q.data) return q.refused;
    return c.json({ precision: 'pair', instances: read.pnl(q.data.instance) });
  });
  v1.get('/trades', (c) => {
    const q = instanceQuery(c, TradesQuery);
    if (!q.data) return q.refused;
    const page = read.trades(q.data);
    return c.json({ precision: 'pair', trades: page.items, next: page.next });
  });
  v1.get('/profit', (c) => {
    const q = query(c, ProfitQuery);
    if (!q.success) return badRequest(c, 'query', q.error);
    return c.json({
      precision: 'pair',
      period: q.data.period,
      periods: read.profit(q.data.period, q.data.limit),
      totals: read.profitTotals(),
    });
  });
  v1.get('/chart', (c) => {
    const q = query(c, ChartQuery);
    if (!q.success) return badRequest(c, 'query', q.error);
    const chart = read.chart(q.data.symbol, q.data.since);
    if (chart === null) return fail(c, 'E_NOT_FOUND', `no candles kept for ${q.data.symbol}`);
    return c.json(chart);
  });
  v1.get('/performance', (c) => c.json({ precision: 'pair', ...read.performance() }));
  v1.get('/count', (c) => c.json(read.openTrades()));
  v1.get('/equity', (c) => c.json({ quotes: read.equity() }));
  v1.get('/prices', (c) => c.json(read.prices()));
  v1.get('/balances', (c) => c.json({ balances: read.balances() }));

  v1.post('/instances/:name/pause', async (c) => {
    const b = await body(c, PauseBody);
    if (b instanceof Response) return b;
    return act(c, () => actions.pauseInstance(c.req.param('name'), { ...by(c), cancelOrders: b.cancelOrders }));
  });
  v1.post('/instances/:name/resume', async (c) => {
    const b = await body(c, EmptyBody);
    if (b instanceof Response) return b;
    return act(c, () => actions.resumeInstance(c.req.param('name'), by(c)));
  });
  v1.post('/instances/:name/exit', async (c) => {
    const b = await body(c, ExitBody);
    if (b instanceof Response) return b;
    const order = b.type === 'market' ? { type: 'MARKET' as const } : { type: 'LIMIT' as const, price: dec(b.price) };
    return act(c, () => actions.exitPosition(c.req.param('name'), order, by(c)));
  });
  v1.post('/instances/:name/entry', async (c) => {
    const b = await body(c, EntryBody);
    if (b instanceof Response) return b;
    const order = b.type === 'market' ? { type: 'MARKET' as const } : { type: 'LIMIT' as const, price: dec(b.price) };
    const amount = b.quoteAmount === undefined ? undefined : dec(b.quoteAmount);
    return act(c, () => actions.forceEntry(c.req.param('name'), order, amount, by(c)));
  });
  v1.delete('/orders/:id', (c) => act(c, () => actions.cancelOrder(c.req.param('id'), by(c))));
  v1.put('/kill-switch', async (c) => {
    const b = await body(c, OnOffBody);
    if (b instanceof Response) return b;
    return act(c, () => actions.setKillSwitch(b.on, by(c)));
  });
  v1.put('/stop-buy', async (c) => {
    const b = await body(c, OnOffBody);
    if (b instanceof Response) return b;
    return act(c, () => actions.setStopBuy(b.on, by(c)));
  });
  v1.post('/reload', async (c) => {
    const b = await body(c, EmptyBody);
    if (b instanceof Response) return b;
    return act(c, () => actions.reloadStrategyFiles(by(c)));
  });
  v1.post('/halt/clear', async (c) => {
    const b = await body(c, EmptyBody);
    if (b instanceof Response) return b;
    return act(c, () => actions.clearAuthHalt(by(c)));
  });
  return v1;
}
