/**
 * Exchange client costs: signing per request, and request overhead (public GET, signed GET) against a local
 * server on 127.0.0.1 in a child process. Bounded: about five seconds in all. Prints one figure per line.
 */
import { fork } from 'node:child_process';
import { ExchangeClient } from '../src/exchange/client.js';
import { booleanParam, decimalParam, queryText, textParam } from '../src/exchange/query.js';
import { signQuery } from '../src/wire/signing.js';

const SECRET = 'bench-secret-0123456789abcdef0123456789abcdef';

const SERVER = `
const http = require('node:http');
const ticker = JSON.stringify({ status: 'ok', data: [{ s: 'BTCUSDT', p: 63000.5, t: 1714521600000, h: 64000, l: 62000 }] });
const open = JSON.stringify({ status: 'ok', data: { orders: [{ displayingId: 1, symbol: 'BTCUSDT', side: 'BUY', type: 'LIMIT',
  status: 'NEW', price: 50000, quantity: 0.01, metadata: {} }] } });
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(req.url.startsWith('/api/v3/') ? ticker : open);
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => process.send(server.address().port));
`;

function benchSigning(): void {
  const endpoint = 'POST /api/v4/spot/order';
  const iterations = 200_000;
  let sink = 0;
  const started = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) {
    const query = queryText([
      textParam(endpoint, 'symbol', 'BTCUSDT'),
      textParam(endpoint, 'side', 'BUY'),
      textParam(endpoint, 'type', 'LIMIT'),
      decimalParam(endpoint, 'quantity', '0.0123'),
      decimalParam(endpoint, 'price', '63012.45'),
      booleanParam('useQuoteQty', false),
    ]);
    sink += signQuery(SECRET, query, 1714521600000 + i).signature.length;
  }
  const ns = Number(process.hrtime.bigint() - started) / iterations;
  console.log(`build + sign order query (HMAC-SHA256): ${(ns / 1000).toFixed(2)} µs/op (${iterations} iterations)`);
  const query = 'symbol=BTCUSDT&side=BUY&type=LIMIT&quantity=0.0123&price=63012.45&useQuoteQty=false';
  const signStarted = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) sink += signQuery(SECRET, query, 1714521600000 + i).signature.length;
  const signNs = Number(process.hrtime.bigint() - signStarted) / iterations;
  if (sink === 0) throw new Error('unreachable');
  console.log(`sign only: ${(signNs / 1000).toFixed(2)} µs/op`);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function benchRequests(label: string, call: () => Promise<unknown>, durationMs: number): Promise<void> {
  for (let i = 0; i < 200; i++) await call(); // warm-up: connections, JIT
  const latencies: number[] = [];
  const end = performance.now() + durationMs;
  const started = performance.now();
  while (performance.now() < end) {
    const t = performance.now();
    await call();
    latencies.push(performance.now() - t);
  }
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  console.log(
    `${label}: ${Math.round(latencies.length / seconds)} req/s sequential, p50 ${percentile(latencies, 50).toFixed(3)} ms, p99 ${percentile(latencies, 99).toFixed(3)} ms`,
  );
}

async function benchConcurrent(label: string, call: () => Promise<unknown>, concurrency: number, durationMs: number) {
  let done = 0;
  const end = performance.now() + durationMs;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        await call();
        done++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  console.log(`${label}: ${Math.round(done / seconds)} req/s with ${concurrency} in flight`);
}

async function main(): Promise<void> {
  benchSigning();
  const child = fork('-', [], { execArgv: ['-e', SERVER], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  try {
    const port = await new Promise<number>((resolve) => child.once('message', (m) => resolve(Number(m))));
    const client = new ExchangeClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: 'bench-key',
      apiSecret: SECRET,
      rateLimit: false,
      connections: 8,
    });
    try {
      await benchRequests('public GET /api/v3/spot/market_watch', () => client.marketWatch(), 1_500);
      await benchRequests('signed GET /api/v4/spot/open', () => client.openOrders(), 1_500);
      await benchConcurrent('signed GET /api/v4/spot/open', () => client.openOrders(), 8, 1_000);
    } finally {
      await client.close();
    }
  } finally {
    child.kill();
  }
}

await main();
