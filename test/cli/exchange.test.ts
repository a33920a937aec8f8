import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ok, orderRecord, type SigningServer, startSigningServer } from '../exchange/signing-server.js';
import { tempDir } from '../support/temp-dir.js';

const ROOT = resolve(import.meta.dirname, '../..');
const KEY = 'cli-key';
const SECRET = 'cli-secret-never-printed';

let server: SigningServer;
/** A working directory of its own, with a .env that holds the secret (as an operator would keep it). */
let cwd: string;

beforeAll(async () => {
  server = await startSigningServer({ apiKey: KEY, apiSecret: SECRET });
  cwd = tempDir('bot-cli');
  writeFileSync(join(cwd, '.env'), `EXCHANGE_API_SECRET=${SECRET}\n`);
});

afterAll(() => server.close());

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function bot(args: string[], env: Record<string, string> = {}): Promise<Result> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ['--import', join(ROOT, 'node_modules/tsx/dist/loader.mjs'), join(ROOT, 'src/cli.ts'), 'exchange', ...args],
      {
        cwd,
        env: {
          PATH: process.env.PATH,
          EXCHANGE_BASE_URL: server.url,
          EXCHANGE_API_KEY: KEY,
          EXCHANGE_RETRY_BASE_MS: '1',
          EXCHANGE_RETRY_MAX_MS: '2',
          ...env,
        },
      },
      (err, stdout, stderr) => done({ code: err ? Number(err.code) : 0, stdout, stderr }),
    );
  });
}

describe('bot exchange', () => {
  it('prints the data as JSON and exits 0; the order goes out signed with plain decimals', async () => {
    server.reply('POST /api/v4/spot/order', ok(orderRecord({ displayingId: 77 })));
    const [tickers, order] = await Promise.all([
      bot(['tickers', '--symbol', 'BTCUSDT']),
      bot([
        'order',
        '--symbol',
        'BTCUSDT',
        '--side',
        'buy',
        '--order-type',
        'LIMIT',
        '--quantity',
        '0.0000001',
        '--price',
        '50000',
      ]),
    ]);
    expect(tickers).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(tickers.stdout)).toEqual([expect.objectContaining({ s: 'BTCUSDT', p: 63000.5 })]);
    expect(order).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(order.stdout)).toMatchObject({ displayingId: '77', status: 'NEW' });
    const [req] = server.calls('POST /api/v4/spot/order');
    expect(req!.verified).toBe(true);
    expect(req!.rawQuery).toMatch(
      /^symbol=BTCUSDT&side=BUY&type=LIMIT&quantity=0\.0000001&price=50000&timestamp=\d+&signature=/,
    );
  });

  it('an exchange error: one line on stderr naming code, status, exchange code and requestId; exit 1', async () => {
    server.reply('GET /api/v4/user/balance', {
      status: 400,
      body: { status: 'BROKER_ERROR', code: 6104, data: { requestId: 'rq-9' }, message: null },
    });
    const out = await bot(['balance', '--type', '0']);
    expect(out.code).toBe(1);
    expect(out.stdout).toBe('');
    expect(out.stderr).toBe(
      'E_EXCHANGE: GET /api/v4/user/balance: exchange refused the request: BROKER_ERROR [HTTP 400, exchange code 6104, requestId rq-9]\n',
    );
    expect(out.stderr).not.toContain(SECRET);
  });

  it('usage errors exit 2 with one line; --help exits 0', async () => {
    const before = server.requests.length;
    const [unknownFlag, wrongCall, stray, badDecimal, help] = await Promise.all([
      bot(['open', '--bogus']),
      bot(['withdraw']),
      bot(['balance', '--order-type', 'LIMIT']),
      bot(['order', '--symbol', 'BTCUSDT', '--side', 'BUY', '--order-type', 'MARKET', '--quantity', '1e-7']),
      bot(['--help']),
    ]);
    for (const out of [unknownFlag, wrongCall, stray, badDecimal]) {
      expect(out.code).toBe(2);
      expect(out.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect(unknownFlag.stderr).toMatch(/--bogus/);
    expect(wrongCall.stderr).toMatch(/unknown call 'withdraw'/);
    expect(stray.stderr).toMatch(/--order-type does not apply to 'balance'/);
    expect(badDecimal.stderr).toMatch(
      /^E_INVALID_REQUEST: POST \/api\/v4\/spot\/order: quantity must be a plain positive decimal/,
    );
    expect(help).toMatchObject({ code: 0 });
    expect(help.stdout).toMatch(/usage: bot exchange <call>/);
    expect(server.requests.length).toBe(before);
  });

  it('a wrong secret: E_AUTH on one line, exit 1', async () => {
    const out = await bot(['open'], { EXCHANGE_API_SECRET: 'not-the-secret' });
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/^E_AUTH: GET \/api\/v4\/spot\/open: authentication failed .*\[HTTP 401\]\n$/);
  });
});
