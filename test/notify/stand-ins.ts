/**
 * Local HTTP stand-ins on 127.0.0.1 for the notification tests: a webhook receiver (also Discord's), and
 * Telegram's Bot API (sendMessage, and getUpdates as a long poll fed by `say`), and virtual timers under which
 * waits take no wall-clock time. (The logger whose lines a test reads is test/support/capture-logger.ts.)
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Timers } from '../../src/ports/clock.js';

export interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  json: unknown;
}

async function listen(handler: (req: IncomingMessage, body: string, res: ServerResponse) => void): Promise<Server> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handler(req, Buffer.concat(chunks).toString('utf8'), res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

const parse = (body: string): unknown => {
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return undefined;
  }
};

/**
 * A webhook receiver: records every POST; `status` decides each answer (default 204). `'hold'` takes the
 * request (it counts as received) and never answers it: the sender's POST stays in flight.
 */
export class Receiver {
  readonly received: Received[] = [];
  /** Answers given, in order, including failures. */
  readonly answers: number[] = [];
  status: (n: number) => number | { status: number; body: string; headers?: Record<string, string> } | 'hold' = () =>
    204;
  private server!: Server;
  private constructor() {}

  static async start(): Promise<Receiver> {
    const r = new Receiver();
    r.server = await listen((req, body, res) => {
      const answer = r.status(r.answers.length);
      if (answer === 'hold') {
        r.received.push({ path: req.url ?? '', headers: req.headers, body, json: parse(body) });
        return;
      }
      const { status, body: text, headers = {} } = typeof answer === 'number' ? { status: answer, body: '' } : answer;
      r.answers.push(status);
      if (status >= 200 && status < 300)
        r.received.push({ path: req.url ?? '', headers: req.headers, body, json: parse(body) });
      res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(text);
    });
    return r;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

interface Update {
  update_id: number;
  message: { message_id: number; date: number; chat: { id: number; type: string }; text: string };
}

/** What the Bot API says with some statuses (the rest: Bad Gateway). */
const DESCRIPTIONS: Record<number, string> = {
  400: 'Bad Request: chat not found',
  429: 'Too Many Requests: retry after 1',
};

/** Telegram's Bot API for one token: records sendMessage, serves getUpdates from `say`. */
export class BotApi {
  readonly sent: { chatId: string; text: string }[] = [];
  /** Every request's path and body, to check that none carries what it must not. */
  readonly requests: { path: string; body: string }[] = [];
  /** The answer to each sendMessage: an HTTP status, or `'hold'` (taken, never answered). */
  sendStatus: (n: number) => number | 'hold' = () => 200;
  private readonly updates: Update[] = [];
  private nextId = 1;
  private waiting: (() => void)[] = [];
  private server!: Server;
  private constructor(readonly token: string) {}

  static async start(token: string): Promise<BotApi> {
    const api = new BotApi(token);
    api.server = await listen((req, body, res) => void api.handle(req, body, res));
    return api;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** A chat message to the bot, as from `chatId`, sent `ageMs` ago. */
  say(chatId: number, text: string, ageMs = 0): void {
    const id = this.nextId++;
    this.updates.push({
      update_id: id,
      message: {
        message_id: id,
        date: Math.floor((Date.now() - ageMs) / 1000),
        chat: { id: chatId, type: 'private' },
        text,
      },
    });
    for (const w of this.waiting.splice(0)) w();
  }

  private async handle(req: IncomingMessage, body: string, res: ServerResponse): Promise<void> {
    const path = req.url ?? '';
    this.requests.push({ path, body });
    const json = (status: number, payload: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
    };
    const m = /^\/bot([^/]+)\/(\w+)$/.exec(path);
    if (!m || m[1] !== this.token) return json(401, { ok: false, error_code: 401, description: 'Unauthorized' });
    const args = (parse(body) ?? {}) as { chat_id?: string; text?: string; offset?: number; timeout?: number };
    if (m[2] === 'sendMessage') {
      const status = this.sendStatus(this.sent.length);
      if (status === 'hold') return;
      if (status !== 200)
        return json(status, {
          ok: false,
          error_code: status,
          description: DESCRIPTIONS[status] ?? 'Bad Gateway',
          ...(status === 429 ? { parameters: { retry_after: 1 } } : {}),
        });
      this.sent.push({ chatId: String(args.chat_id), text: String(args.text) });
      return json(200, { ok: true, result: { message_id: this.sent.length } });
    }
    if (m[2] === 'getUpdates') {
      const pending = () => this.updates.filter((u) => u.update_id >= (args.offset ?? 0));
      if (pending().length === 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(1000, (args.timeout ?? 0) * 1000));
          this.waiting.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      if (res.destroyed) return;
      return json(200, { ok: true, result: pending() });
    }
    return json(404, { ok: false, error_code: 404, description: 'Not Found' });
  }

  close(): Promise<void> {
    for (const w of this.waiting.splice(0)) w();
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * Virtual time: a sleep moves the clock forward by its length and resolves on the next turn of the event
 * loop, so limits and backoff are exercised in full without waiting; `slept` lists every wait asked for.
 */
export class VirtualTimers implements Timers {
  readonly slept: number[] = [];
  constructor(public time = Date.UTC(2024, 0, 1)) {}
  now(): number {
    return this.time;
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.resolve();
    this.slept.push(ms);
    this.time += Math.max(0, ms);
    return new Promise((resolve) => setImmediate(resolve));
  }
}

/** Time that moves only when the test says: `advance` wakes every sleep that falls due. */
export class ManualTimers implements Timers {
  private sleepers: { until: number; resolve: () => void }[] = [];
  constructor(public time = Date.UTC(2024, 0, 1)) {}
  now(): number {
    return this.time;
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const entry = { until: this.time + Math.max(0, ms), resolve };
      this.sleepers.push(entry);
      signal?.addEventListener('abort', () => resolve(), { once: true });
      if (ms <= 0) this.wakeDue();
    });
  }
  advance(ms: number): void {
    this.time += ms;
    this.wakeDue();
  }
  private wakeDue(): void {
    const due = this.sleepers.filter((s) => s.until <= this.time);
    this.sleepers = this.sleepers.filter((s) => s.until > this.time);
    for (const s of due) s.resolve();
  }
}
