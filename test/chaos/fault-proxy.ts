/**
 * A fault proxy between the daemon and the simulated exchange's HTTP server: forwards every request as it is,
 * unless a fault is set, and then answers as a failing exchange, gateway or network would. It keeps every
 * request signature it saw (for the secrets scan) and the time of every order create that reached the
 * exchange and came back intact (to measure when trading resumed).
 */
import { once } from 'node:events';
import {
  createServer,
  type IncomingMessage,
  request as httpRequest,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export const FAULTS = [
  '5xx',
  '429',
  'latency',
  'reset',
  'malformed',
  'shape',
  'html',
  '401',
  'outage',
  'lost-reset',
  'lost-timeout',
  'lost-502',
  'lost-shape',
] as const;
/**
 * Answers that are slow to read (bench/slow-answer.ts; not among the suite's phases): a read's real answer a
 * byte at a time, or after 100 MB of padding. Writes are left alone (a lost answer is the `lost-` faults').
 */
export const SLOW_ANSWERS = ['trickle', 'huge'] as const;
export type Fault = (typeof FAULTS)[number] | (typeof SLOW_ANSWERS)[number];

interface Upstream {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

const CREATE = 'POST /api/v4/spot/order';
const HISTORY_ROUTES = new Map<string, 'orders' | 'trades'>([
  ['GET /api/v4/spot/history', 'orders'],
  ['GET /api/v4/spot/trade', 'trades'],
]);

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

export class FaultProxy {
  fault: Fault | undefined;
  /** Every signature the daemon sent (they must never appear in its output or database). */
  readonly signatures = new Set<string>();
  /** Order creates the exchange accepted and whose answer reached the daemon intact. */
  readonly creates: number[] = [];
  /** History reads without a symbol (the account's, shared by its pairs), of orders and of trades, however answered. */
  readonly accountReads = { orders: 0, trades: 0 };
  /** Requests answered with a fault, by fault. */
  readonly injected = new Map<Fault, number>();
  /** When the last answer with the fault set began, and to what (undefined: none since it was set). */
  injection: { at: number; route: string } | undefined;
  /** Answers left to give the fault (then healthy again); undefined: until the next `set`. */
  private left: number | undefined;
  /** The one path the fault applies to (undefined: every request it can apply to). */
  private only: string | undefined;
  private readonly sockets = new Set<Socket>();
  private server: Server;
  private port = 0;
  private readonly upstream: URL;

  private constructor(
    upstream: string,
    /** How long a `latency`/`lost-timeout` answer is held: beyond the client's timeout (a `trickle` byte: a quarter of it). */
    private readonly holdMs: number,
  ) {
    this.upstream = new URL(upstream);
    this.server = this.newServer();
  }

  static async start(upstream: string, holdMs: number): Promise<FaultProxy> {
    const proxy = new FaultProxy(upstream, holdMs);
    await proxy.listen();
    return proxy;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /**
   * Sets the fault (undefined: healthy), for `answers` answers it applies to or until the next call, to requests
   * for `path` only when given. An outage closes the port (connections refused) until it ends.
   */
  async set(fault: Fault | undefined, answers?: number, path?: string): Promise<void> {
    const wasOutage = this.fault === 'outage';
    this.fault = fault;
    this.left = answers;
    this.only = path;
    this.injection = undefined;
    if (fault === 'outage' && !wasOutage) {
      const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
      for (const s of this.sockets) s.destroy();
      await closed;
    } else if (fault !== 'outage' && wasOutage) {
      this.server = this.newServer();
      await this.listen();
    }
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    if (this.server.listening) await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private newServer(): Server {
    const server = createServer((req, res) => void this.handle(req, res));
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    return server;
  }

  private async listen(): Promise<void> {
    this.server.listen(this.port, '127.0.0.1');
    await once(this.server, 'listening');
    this.port = (this.server.address() as AddressInfo).port;
  }

  private count(fault: Fault): void {
    this.injected.set(fault, (this.injected.get(fault) ?? 0) + 1);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const url = new URL(req.url ?? '/', 'http://proxy');
    const signature = url.searchParams.get('signature');
    if (signature) this.signatures.add(signature);
    const route = `${req.method} ${url.pathname}`;
    const history = HISTORY_ROUTES.get(route);
    if (history && !url.searchParams.has('symbol')) this.accountReads[history]++;
    const fault = this.fault;
    const create = route === CREATE;
    const slow = fault === 'trickle' || fault === 'huge';
    try {
      if (
        fault === undefined ||
        (this.only !== undefined && url.pathname !== this.only) ||
        (fault.startsWith('lost-') && !create) ||
        (slow && req.method !== 'GET')
      ) {
        const answer = await this.forward(req, body);
        if (create && answer.status === 200) this.creates.push(Date.now());
        return this.reply(res, answer);
      }
      this.count(fault);
      this.injection = { at: Date.now(), route };
      if (this.left !== undefined && --this.left <= 0) this.fault = undefined;
      switch (fault) {
        case '5xx':
          return json(res, 503, { statusCode: 503, message: 'Service Unavailable' });
        case '429':
          return json(res, 429, { statusCode: 429, message: 'Too Many Requests' }, { 'retry-after': '1' });
        case 'latency': {
          const answer = await this.forward(req, body);
          await new Promise((r) => setTimeout(r, this.holdMs));
          return this.reply(res, answer);
        }
        case 'reset':
          req.socket.destroy();
          return;
        case 'malformed':
          return json(res, 200, '{"status":"ok","data":[{"symbol":"BTCUSDT","pri');
        case 'shape':
          return json(res, 200, { status: 'ok', data: { unexpected: ['shape'] } });
        case 'html':
          res.writeHead(502, { 'content-type': 'text/html' });
          return void res.end('<html><head><title>502 Bad Gateway</title></head><body><h1>502</h1></body></html>');
        case '401':
          return json(res, 401, { statusCode: 401, message: 'Unauthorized', error: 'Unauthorized' });
        case 'outage':
          req.socket.destroy();
          return;
        case 'trickle':
          // The real answer, a byte at a time, each within the client's timeout of a silence: minutes long.
          return this.trickle(res, await this.forward(req, body));
        case 'huge':
          return this.huge(res, await this.forward(req, body));
        default: {
          // A lost answer: the exchange accepted the order; its answer never reaches the daemon intact.
          await this.forward(req, body);
          if (fault === 'lost-reset') return void req.socket.destroy();
          if (fault === 'lost-timeout') {
            await new Promise((r) => setTimeout(r, this.holdMs));
            return void req.socket.destroy();
          }
          if (fault === 'lost-502') return json(res, 502, { statusCode: 502, message: 'Bad Gateway' });
          return json(res, 200, { status: 'ok', data: { orderAccepted: 'maybe' } });
        }
      }
    } catch {
      req.socket.destroy();
    }
  }

  /** Writes the answer one byte every quarter of `holdMs` (until the client hangs up). */
  private trickle(res: ServerResponse, answer: Upstream): void {
    res.writeHead(answer.status, answer.headers);
    let at = 0;
    const timer = setInterval(() => {
      if (res.destroyed || at >= answer.body.length) {
        clearInterval(timer);
        return void res.end();
      }
      res.write(answer.body.subarray(at, ++at));
    }, this.holdMs / 4);
  }

  /** The answer after 100 MB of spaces (valid JSON still), written as the client reads it (until it hangs up). */
  private huge(res: ServerResponse, answer: Upstream): void {
    res.writeHead(answer.status, answer.headers);
    const chunk = Buffer.alloc(1024 * 1024, ' ');
    let left = 100;
    const more = (): void => {
      while (left > 0 && !res.destroyed) {
        left--;
        if (!res.write(chunk)) return void res.once('drain', more);
      }
      if (!res.destroyed) res.end(answer.body);
    };
    more();
  }

  private reply(res: ServerResponse, answer: Upstream): void {
    res.writeHead(answer.status, answer.headers);
    res.end(answer.body);
  }

  private forward(req: IncomingMessage, body: Buffer): Promise<Upstream> {
    return new Promise((resolve, reject) => {
      const headers = { ...req.headers, host: this.upstream.host };
      const out = httpRequest(
        { host: this.upstream.hostname, port: this.upstream.port, method: req.method, path: req.url, headers },
        (upstream) => {
          const chunks: Buffer[] = [];
          upstream.on('data', (c: Buffer) => chunks.push(c));
          upstream.on('end', () => {
            const kept: Record<string, string> = {};
            for (const name of ['content-type', 'date', 'retry-after']) {
              const v = upstream.headers[name];
              if (typeof v === 'string') kept[name] = v;
            }
            resolve({ status: upstream.statusCode ?? 502, headers: kept, body: Buffer.concat(chunks) });
          });
          upstream.on('error', reject);
        },
      );
      out.on('error', reject);
      out.end(body);
    });
  }
}
