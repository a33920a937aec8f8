/**
 * Issue 21: paper on recordings says at its start what it replays (the files, the data's time range, the pairs
 * and whose rules they trade by), and a PAPER_DATA file that breaks off or is corrupt stops the start in one
 * line naming the file and where it breaks, with no stack trace, unless PAPER_ALLOW_PARTIAL=true (then one
 * warning says where, and the complete lines are replayed). The daemon as a real process.
 */
import { mkdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  DaemonProcess,
  daemonEnv,
  everyOrderFile,
  npmStart,
  readDb,
  restingFile,
  TEST_STRATEGIES,
  waitFor,
  writeSwingRecording,
} from './daemon-process.js';
import { tempDir } from '../support/temp-dir.js';

const dir = tempDir('e2e-paper-data');
const START = Date.UTC(2024, 0, 1);
const TICKERS = 20_000;
let good: string;

beforeAll(async () => {
  mkdirSync(join(dir, 'config'));
  writeFileSync(join(dir, 'config', 'all.json'), everyOrderFile('all-types', { near: 20_000 }));
  good = join(dir, 'BTCUSDT-good.jsonl.gz');
  await writeSwingRecording(good, { count: TICKERS, start: START });
});

const paper = (name: string, data: string, extra: Record<string, string> = {}) =>
  new DaemonProcess(
    daemonEnv({
      DB_PATH: join(dir, `${name}.db`),
      CONFIG_DIR: join(dir, 'config'),
      STRATEGIES_DIR: TEST_STRATEGIES,
      KILL_SWITCH_FILE: join(dir, 'KILL'),
      PAPER_DATA: data,
      PAPER_FROM: '2024-01-01',
      ...extra,
    }),
  );

/** The daemon's lines once it exited, but the one about the journal's lock (taken before the venue is set up). */
async function refusal(daemon: DaemonProcess): Promise<string[]> {
  expect(await daemon.exited).toEqual({ code: 1, signal: null });
  return daemon.lines.filter((l) => l.trim() !== '' && !l.includes("holding the journal's lock"));
}

const msg = (line: string) => (JSON.parse(line) as { msg: string }).msg;

describe('PAPER_DATA checked at the start', () => {
  it('refuses a truncated recording in one line naming the file, the line and the byte', async () => {
    const file = join(dir, 'BTCUSDT-cut.jsonl.gz');
    writeFileSync(file, readFileSync(good));
    const cut = Math.floor(statSync(file).size / 2);
    truncateSync(file, cut);
    const lines = await refusal(paper('cut', file));
    expect(lines).toHaveLength(1);
    expect(msg(lines[0]!)).toMatch(
      new RegExp(
        `^not started: PAPER_DATA: ${file}:\\d+ \\(compressed byte ${cut}\\): the gzip data ends early \\(truncated\\); ` +
          'the \\d+ lines before it are complete \\(PAPER_ALLOW_PARTIAL=true replays them',
      ),
    );
    expect(lines[0]).not.toMatch(/"stack"|\n\s+at /);
  });

  it('refuses a corrupt line in one line naming the file and the line', async () => {
    const file = join(dir, 'BTCUSDT-bad.jsonl.gz');
    const text = gunzipSync(readFileSync(good)).toString('utf8').split('\n');
    text[500] = '{"s":"BTCUSDT","p":20000.5,"t":';
    writeFileSync(file, gzipSync(text.join('\n')));
    const lines = await refusal(paper('bad', file));
    expect(lines).toHaveLength(1);
    expect(msg(lines[0]!)).toMatch(new RegExp(`^not started: PAPER_DATA: ${file}:501: malformed JSON line`));
    expect(lines[0]).not.toMatch(/"stack"|\n\s+at /);
  });

  it('npm start stops in one line, no stack trace: a truncated file, and a pair whose recording carries no rules', async () => {
    const cut = join(dir, 'BTCUSDT-npm-cut.jsonl.gz');
    writeFileSync(cut, readFileSync(good));
    truncateSync(cut, Math.floor(statSync(cut).size / 2));
    // BTCUSD is no built-in pair, and this recording's header carries no rules for it.
    const bare = join(dir, 'BTCUSD-bare.jsonl.gz');
    await writeSwingRecording(bare, { symbol: 'BTCUSD', count: 100, start: START });
    const usdConfig = join(dir, 'config-usd');
    mkdirSync(usdConfig);
    writeFileSync(
      join(usdConfig, 'usd.json'),
      JSON.stringify({ name: 'usd', strategy: 'every-order', symbol: 'BTCUSD', schedule: '* * * * * *', params: {} }),
    );
    const cases = [
      {
        name: 'npm-cut',
        data: cut,
        config: join(dir, 'config'),
        expected: `PAPER_DATA: ${cut}:\\d+ \\(compressed byte`,
      },
      {
        name: 'npm-bare',
        data: bare,
        config: usdConfig,
        expected: `no pair rules for BTCUSD in PAPER_DATA \\(${bare}\\): re-import it with \`bot import-candles --symbol BTCUSD`,
      },
    ];
    for (const c of cases) {
      const { npm, lines } = npmStart(
        daemonEnv({
          DB_PATH: join(dir, `${c.name}.db`),
          CONFIG_DIR: c.config,
          STRATEGIES_DIR: TEST_STRATEGIES,
          KILL_SWITCH_FILE: join(dir, 'KILL'),
          PAPER_DATA: c.data,
        }),
      );
      const code = await new Promise<number | null>((resolve) => npm.once('exit', resolve));
      expect(code, lines.join('\n')).toBe(1);
      // npm's own lines ("> spot-bot@… start", "> exec node …") aside, and the journal lock's.
      const said = lines.filter(
        (l) => l.trim() !== '' && !l.startsWith('>') && !l.includes("holding the journal's lock"),
      );
      expect(said, said.join('\n')).toHaveLength(1);
      expect(msg(said[0]!)).toMatch(new RegExp(`^not started: ${c.expected}`));
      expect(said[0]).not.toMatch(/"stack"|\n\s+at /);
    }
  }, 120_000);

  it('with PAPER_ALLOW_PARTIAL=true replays what is complete, says where it stops, and what it replays', async () => {
    const file = join(dir, 'BTCUSDT-partial.jsonl.gz');
    writeFileSync(file, readFileSync(good));
    truncateSync(file, Math.floor(statSync(file).size / 2));
    const daemon = paper('partial', file, { PAPER_ALLOW_PARTIAL: 'true' });
    try {
      const banner = await waitFor('the start line', () => daemon.messages(/PAPER TRADING on recorded data/)[0], {
        daemon,
      });
      const warnings = daemon.messages(/"msg":"PAPER_DATA: /);
      expect(warnings).toHaveLength(1);
      const m =
        /:(\d+) \(compressed byte \d+\): the gzip data ends early \(truncated\): replaying the (\d+) complete lines before it \(PAPER_ALLOW_PARTIAL=true\)$/.exec(
          msg(warnings[0]!),
        );
      expect(m, msg(warnings[0]!)).not.toBeNull();
      const complete = Number(m![2]);
      expect(Number(m![1])).toBe(complete + 1);
      // The header is line 1; the tickers are one second apart from START.
      const tickers = complete - 1;
      expect(tickers).toBeGreaterThan(0);
      expect(tickers).toBeLessThan(TICKERS);
      expect(msg(banner)).toBe(
        `PAPER TRADING on recorded data (simulated exchange at ${/http:\/\/127\.0\.0\.1:\d+/.exec(banner)![0]}): ` +
          `${file} at 60x recorded speed; data ${new Date(START).toISOString()} to ` +
          `${new Date(START + (tickers - 1) * 1000).toISOString()}; pairs BTCUSDT (BTC/USDT, tick 0.01, built-in rules, ${tickers} tickers)`,
      );
    } finally {
      expect(await daemon.stop()).toEqual({ code: 0, signal: null });
    }
  });
});

describe('a paper account restarted on other data', () => {
  it('goes on after its own records: the new data are shifted by whole days, and an order fills after it was placed, from its trade', async () => {
    const db = join(dir, 'other-data.db');
    const config = join(dir, 'resting-config');
    mkdirSync(config);
    writeFileSync(join(config, 'rest.json'), restingFile(1));
    // The second recording starts when the first did, at a price that takes the resting BUY (half of 20,000).
    const crash = join(dir, 'BTCUSDT-crash.jsonl.gz');
    await writeSwingRecording(crash, { count: 900, start: START, mid: 9_000, amplitudePct: 0 });
    const run = (data: string) =>
      new DaemonProcess(
        daemonEnv({
          DB_PATH: db,
          CONFIG_DIR: config,
          STRATEGIES_DIR: TEST_STRATEGIES,
          KILL_SWITCH_FILE: join(dir, 'no-kill'),
          PAPER_DATA: data,
          PAPER_SPEED: '60',
        }),
      );
    const placed = () =>
      readDb(db, (d) =>
        d.prepare("SELECT exchange_id AS id, created_at AS at FROM orders WHERE status = 'OPEN'").all(),
      ) as { id: string; at: number }[];

    const first = run(good);
    await waitFor('the resting order on the exchange', () => placed().length === 1, { daemon: first });
    const [order] = placed();
    expect(await first.stop()).toEqual({ code: 0, signal: null });

    const second = run(crash);
    const fillOf = () =>
      readDb(db, (d) =>
        d
          .prepare(
            'SELECT f.fill_key AS key, f.source, f.time FROM fills f JOIN orders o ON o.local_id = f.order_local_id WHERE o.exchange_id = ?',
          )
          .get(order!.id),
      ) as { key: string; source: string; time: number } | undefined;
    // Long enough in the data's time for the fill grace (300 s) to pass: a trade outside the read window would
    // have been recorded from the order's executed quantity by then.
    await waitFor(
      'the resting order filled and 400 s of data past it',
      () => {
        const fill = fillOf();
        const now = readDb(db, (d) => d.prepare('SELECT MAX(time) FROM paper_market').pluck().get() as number);
        return fill !== undefined && now > fill.time + 400_000;
      },
      { daemon: second },
    );
    expect(await second.stop()).toEqual({ code: 0, signal: null });

    const fill = fillOf()!;
    expect(fill.source).toBe('trade');
    expect(fill.key).toMatch(/^sim-trade-\d+$/);
    expect(fill.time).toBeGreaterThan(order!.at);
    expect(fill.time - START).toBeGreaterThanOrEqual(86_400_000);
    expect(second.messages(/the replay's times are shifted 1 day\(s\) forward/)).toHaveLength(1);
  }, 180_000);
});
