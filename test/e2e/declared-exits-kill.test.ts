/**
 * The exits and protections the engine enforces, through a real paper daemon on live prices the test moves
 * (paperLiveUpstream): the stop-loss on ticks (on a pair whose order types cannot hold it on the exchange), the
 * trailing stop, the roi exit, the losing-trades protection, the max-drawdown protection and the cooldown after
 * a stop-out (on ticks, and after a stop held on the exchange) each trigger once on a price path that crosses
 * them, and survive a kill -9 at the worst moment, which the daemon's test hooks pick (BOT_CRASH_AT): an exit's
 * order journaled and not sent (after-journal), sent and filled with the answer not journaled (after-send), a
 * fill committed with the engine not yet told (after-fill-record: a protection not yet decided, a held stop's
 * fill not yet reported), the held stop's own placement (after-journal, after-send), a held stop gapped under its
 * limit cancelled with the sale at market not yet journaled (exit-after-cancel); and the held OCO bracket's
 * take-profit filled while the daemon is down (a roi exit: no cooldown). Restarted on the same database, the journal agrees with the paper exchange, which
 * holds exactly one exit SELL per exit, and a protection trips exactly once. Every wait is on a fact in the
 * database: the saved watch, a journal row, an event, the last price the daemon wrote.
 * (test/e2e/held-exit-kill.test.ts: the held stop filled while the daemon is down.)
 */
import { describe, expect, it } from 'vitest';
import { auditPaperDb, paperAuditSettled } from '../chaos/paper-audit.js';
import { DEFAULT_ASSETS, simPairConfig } from '../../src/sim/default-market.js';
import {
  DaemonProcess,
  heldStopOnPaper,
  http,
  lastPrice,
  paperLiveUpstream,
  readDb,
  reenterFile as strategyFile,
  waitFor,
  paperOrders,
} from './daemon-process.js';
import { freePort } from '../support/free-port.js';

/** The refresh saves the watch every second (its high is what the test waits on); unknown outcomes resolve in 2 s. */
const EXTRA = { REFRESH: '* * * * * *', RECONCILE_WINDOW_MS: '2000' };

interface Row {
  side: string;
  type: string;
  tag: string;
  status: string;
}

const orders = (db: string) =>
  readDb(db, (d) =>
    d.prepare("SELECT side, type, tag, status FROM orders WHERE instance = 'x' ORDER BY seq").all(),
  ) as Row[];
const filled = (db: string, tag: string) => orders(db).filter((r) => r.tag === tag && r.status === 'FILLED').length;
const fillCount = (db: string) =>
  readDb(db, (d) => d.prepare("SELECT COUNT(*) FROM fills WHERE instance = 'x'").pluck().get()) as number;
const events = (db: string, kind: string) =>
  readDb(db, (d) =>
    (d.prepare('SELECT data FROM events WHERE kind = ? ORDER BY id').pluck().all(kind) as string[]).map(
      (j) => JSON.parse(j) as Record<string, unknown>,
    ),
  );
/** The declared exits' watch as the daemon last saved it. */
const watch = (db: string) =>
  readDb(db, (d) => {
    const text = d.prepare("SELECT state FROM strategy_state WHERE instance = 'x/exits'").pluck().get() as
      string | undefined;
    return text === undefined ? undefined : (JSON.parse(text) as { peak?: number });
  });
/** SELLs on the paper exchange's own ledger (the strategy sends none: each is an exit). */
const paperSells = (db: string) => paperOrders(db, 'SELL').length;
/** The order types of the SELLs on the paper exchange's ledger. */
const paperTypes = (db: string) => paperOrders(db, 'SELL').map((o) => o.type);
const paperBuys = (db: string) => paperOrders(db, 'BUY').length;

/** Runs the first daemon armed to kill itself at `point`; `drive` moves prices until it does. */
async function killedAt(env: NodeJS.ProcessEnv, point: string, drive: (d: DaemonProcess) => Promise<void>) {
  const first = new DaemonProcess({ ...env, ...EXTRA, BOT_TEST_HOOKS: '1', BOT_CRASH_AT: point });
  await drive(first);
  await waitFor(`the daemon to kill itself at ${point}`, () => first.exit);
  expect(first.exit, first.lines.slice(-20).join('\n')).toEqual({ code: null, signal: 'SIGKILL' });
}

const TOKEN = 'e2e-declared-exits-token-7c2d';

/** Instance x as GET /api/v1/status shows it (the same read model as `bot status --json`). */
interface StatusInstance {
  instance: string;
  protections: { protection: string; reason: string; until: string }[];
}

/**
 * Restarts on the same database and waits until the journal agrees with the paper exchange after `until`;
 * `status` then gets instance x from the running daemon's control API.
 */
async function restarted(
  env: NodeJS.ProcessEnv,
  db: string,
  until: string,
  check: () => boolean,
  status?: (x: StatusInstance) => void,
) {
  const port = status === undefined ? 0 : await freePort();
  const second = new DaemonProcess({ ...env, ...EXTRA, API_PORT: String(port), API_TOKEN: TOKEN });
  await waitFor(until, check, { daemon: second });
  await paperAuditSettled('the journal to agree with the paper exchange', db, second);
  if (status !== undefined) {
    await waitFor('the control API', () => second.messages(/control API and dashboard on/).length > 0, {
      daemon: second,
    });
    const answer = await http(`http://127.0.0.1:${port}/api/v1/status`, { token: TOKEN });
    expect(answer.status).toBe(200);
    const { instances } = answer.body as { instances: StatusInstance[] };
    status(instances.find((i) => i.instance === 'x')!);
  }
  expect(await second.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  expect(auditPaperDb(db).problems).toEqual([]);
}

/** A protection-tripped event's data as status shows it. */
const shown = (e: Record<string, unknown>) => ({
  protection: e.protection,
  reason: e.reason,
  until: new Date(e.until as number).toISOString(),
});

/** The event of a cooldown of 60 min a stop-out (`reason`) started. */
const cooldown = (reason: string) => ({
  protection: 'cooldown',
  until: expect.any(Number) as number,
  reason: `cooldown of 60 min after a stop-out (${reason}) (protections.cooldownMinutes)`,
});

/** `bot status` (the table) on the database, as a process: its output. */
async function statusTable(env: NodeJS.ProcessEnv): Promise<string> {
  const status = new DaemonProcess(env, ['status']);
  expect(await status.exited).toEqual({ code: 0, signal: null });
  return status.lines.join('\n');
}

/**
 * The trailing stop arms once the high clears the average entry (fee included) by trailingActivationPct: the
 * price goes to `price` and the test waits until the daemon's saved watch holds it as the position's high.
 */
function highs(suite: ReturnType<typeof paperLiveUpstream>) {
  return async (daemon: DaemonProcess, price: number) => {
    suite.price(price);
    await waitFor(`the watch to save the high ${price}`, () => watch(suite.db)?.peak === price, { daemon });
  };
}

/** The price goes to `price`, and the test waits until the daemon wrote it as the last it saw (every 5 s). */
function seen(suite: ReturnType<typeof paperLiveUpstream>) {
  return async (daemon: DaemonProcess, price: number) => {
    suite.price(price);
    await waitFor(`the daemon to see ${price}`, () => lastPrice(suite.db) === String(price), { daemon });
  };
}

/** BTCUSDT where the exchange takes LIMIT and MARKET orders only: no stop can be held there. */
const NO_STOPS = [simPairConfig(DEFAULT_ASSETS[0]!, DEFAULT_ASSETS[1]!, { orderTypes: ['LIMIT', 'MARKET'] })];

describe.each(['after-journal:2', 'after-send:2'])('stop-loss on ticks, killed -9 at %s of its exit', (point) => {
  const suite = paperLiveUpstream('e2e-tick-stop-', 20_000, NO_STOPS);
  const see = seen(suite);
  it('sells once at the first price under the stop after the restart; nothing is held on the exchange', async () => {
    const { db } = suite;
    const env = suite.env({ 'x.json': strategyFile({ entries: 2, exits: { stopLossPct: 2 } }) });
    // The average entry carries the fee taken in BTC (20,000 / 0.999 = 20,020.02): the stop is 2 % under it.
    const stop = (20_000 / 0.999) * 0.98;
    await killedAt(env, point, async (first) => {
      await waitFor('the entry to fill', () => filled(db, 'entry') === 1, { daemon: first });
      // Over the stop (19,619.62): nothing. The second price seen means the first was decided on.
      await see(first, 19_700);
      await see(first, 19_620);
      expect(events(db, 'exit-triggered')).toEqual([]);
      suite.price(19_600);
    });
    expect(events(db, 'exit-triggered')).toEqual([expect.objectContaining({ reason: 'stop-loss', price: 19_600 })]);
    expect(Number(events(db, 'exit-triggered')[0]!.level)).toBeCloseTo(stop, 6);
    expect(
      orders(db)
        .filter((r) => r.tag === 'exit:stop-loss')
        .map((r) => r.status),
    ).toEqual(['PENDING']);

    // Restarted: the exit is sent (again only when the first never left), then the strategy re-enters at 19,600,
    // which proves the engine saw the position flat; that new position's stop (19,227) is far under the price.
    await restarted(env, db, 'the exit filled and the second entry', () => filled(db, 'entry') === 2);
    const exits = orders(db).filter((r) => r.tag === 'exit:stop-loss');
    expect(exits.filter((r) => r.status === 'FILLED')).toEqual([
      { side: 'SELL', type: 'MARKET', tag: 'exit:stop-loss', status: 'FILLED' },
    ]);
    expect(paperSells(db)).toBe(1);
    // On ticks alone: the exchange never held a stop for it.
    expect(paperTypes(db)).toEqual(['MARKET']);
    expect(events(db, 'exit-held')).toEqual([]);
    if (point.startsWith('after-send')) {
      expect(exits).toHaveLength(1);
      expect(events(db, 'exit-triggered')).toHaveLength(1);
    } else {
      expect(exits.map((r) => r.status)).toEqual(['NOT_PLACED', 'FILLED']);
      expect(events(db, 'exit-triggered').map((e) => [e.reason, e.price])).toEqual([
        ['stop-loss', 19_600],
        ['stop-loss', 19_600],
      ]);
    }
  }, 150_000);
});

describe.each(['after-journal:2', 'after-send:2'])('trailing stop, killed -9 at %s of its exit', (point) => {
  const suite = paperLiveUpstream('e2e-trailing-', 20_000);
  const high = highs(suite);
  it('sells once at the trailed level after the restart; the position re-entered is not sold again', async () => {
    const { db } = suite;
    const env = suite.env({
      'x.json': strategyFile({ entries: 2, exits: { trailingStopPct: 1, trailingActivationPct: 1 } }),
    });
    await killedAt(env, point, async (first) => {
      await waitFor('the entry to fill', () => filled(db, 'entry') === 1, { daemon: first });
      // Armed (1 % up) with a high of 20,400: its stop is at 20,196.
      await high(first, 20_400);
      suite.price(20_100);
    });
    expect(events(db, 'exit-triggered')).toEqual([
      expect.objectContaining({ reason: 'trailing-stop', price: 20_100, level: 20_196 }),
    ]);
    expect(
      orders(db)
        .filter((r) => r.tag === 'exit:trailing-stop')
        .map((r) => r.status),
    ).toEqual(['PENDING']);

    // Restarted: the exit is sent (again only when the first never left), then the strategy re-enters at 20,100,
    // which proves the engine saw the position flat; that new position's own high (20,100) arms nothing.
    await restarted(env, db, 'the exit filled and the second entry', () => filled(db, 'entry') === 2);
    const exits = orders(db).filter((r) => r.tag === 'exit:trailing-stop');
    expect(exits.filter((r) => r.status === 'FILLED')).toHaveLength(1);
    expect(paperSells(db)).toBe(1);
    if (point.startsWith('after-send')) {
      // It reached the exchange: the restart found it there and decided nothing again.
      expect(exits).toHaveLength(1);
      expect(events(db, 'exit-triggered')).toHaveLength(1);
    } else {
      // It never left: the restart found it not placed, and the same stop (its high kept) sold once.
      expect(exits.map((r) => r.status)).toEqual(['NOT_PLACED', 'FILLED']);
      expect(events(db, 'exit-triggered').map((e) => e.level)).toEqual([20_196, 20_196]);
    }
  }, 150_000);
});

describe.each(['after-journal:2', 'after-send:2'])('roi, killed -9 at %s of its exit', (point) => {
  const suite = paperLiveUpstream('e2e-roi-', 20_000);
  const see = seen(suite);
  it('takes the profit at its target, and sells once through the restart', async () => {
    const { db } = suite;
    const env = suite.env({ 'x.json': strategyFile({ entries: 2, exits: { roi: { '0': 2 } } }) });
    await killedAt(env, point, async (first) => {
      await waitFor('the entry to fill', () => filled(db, 'entry') === 1, { daemon: first });
      // Under the target (20,428.43): nothing. The second price seen means the first was decided on.
      await see(first, 20_400);
      await see(first, 20_420);
      expect(events(db, 'exit-triggered')).toEqual([]);
      suite.price(20_500);
    });
    // The average entry carries the fee taken in BTC (20,000 / 0.999); the target is 2 % over it.
    const [triggered] = events(db, 'exit-triggered') as {
      reason: string;
      price: number;
      level: number;
      entry: string;
    }[];
    expect(triggered).toMatchObject({ reason: 'roi', price: 20_500 });
    expect(triggered!.level).toBeCloseTo(Number(triggered!.entry) * 1.02, 6);
    expect(triggered!.level).toBeCloseTo((20_000 / 0.999) * 1.02, 6);
    expect(events(db, 'exit-triggered')).toHaveLength(1);
    await restarted(env, db, 'the exit filled and the second entry', () => filled(db, 'entry') === 2);
    const exits = orders(db).filter((r) => r.tag === 'exit:roi');
    expect(exits.filter((r) => r.status === 'FILLED')).toEqual([
      { side: 'SELL', type: 'MARKET', tag: 'exit:roi', status: 'FILLED' },
    ]);
    expect(paperSells(db)).toBe(1);
    // It reached the exchange: found there, decided once. It never left: not placed, decided again, sold once.
    // The second entry, at 20,500, has its own target (20,910): the price there sells nothing.
    expect(exits.map((r) => r.status)).toEqual(point.startsWith('after-send') ? ['FILLED'] : ['NOT_PLACED', 'FILLED']);
    expect(events(db, 'exit-triggered')).toHaveLength(point.startsWith('after-send') ? 1 : 2);
  }, 150_000);
});

/** Entries refused by a tripped protection (the strategy tries on every tick while flat). */
const refusedBy = (db: string, re: RegExp) =>
  events(db, 'refused').filter((e) => typeof e.reason === 'string' && re.test(e.reason));

describe('losingTrades, killed -9 between the second losing fill and the protection', () => {
  const suite = paperLiveUpstream('e2e-losing-', 20_000);
  const high = highs(suite);
  it('trips once at the restart, from the journal, and refuses every entry after', async () => {
    const { db } = suite;
    const env = suite.env({
      'x.json': strategyFile({
        entries: 1_000,
        exits: { trailingStopPct: 1 },
        protections: { losingTrades: { count: 2, windowMinutes: 60, pauseMinutes: 60 } },
      }),
    });
    // Fills: entry 20,000, high 20,100, stopped out at 19,700; entry 19,700, high 19,800, stopped out at 19,400
    // (the 4th fill).
    await killedAt(env, 'after-fill-record:4', async (first) => {
      await waitFor('the entry to fill', () => filled(db, 'entry') === 1, { daemon: first });
      await high(first, 20_100);
      suite.price(19_700);
      await waitFor('the first loss and the second entry', () => filled(db, 'entry') === 2, { daemon: first });
      expect(events(db, 'protection-tripped')).toEqual([]);
      await high(first, 19_800);
      suite.price(19_400);
    });
    expect(fillCount(db)).toBe(4);
    expect(events(db, 'protection-tripped')).toEqual([]);

    await restarted(
      env,
      db,
      'an entry refused by the protection',
      () => refusedBy(db, /losing trades/).length > 0,
      (x) => expect(x.protections).toEqual([shown(events(db, 'protection-tripped')[0]!)]),
    );
    expect(events(db, 'protection-tripped')).toEqual([
      expect.objectContaining({
        protection: 'losingTrades',
        reason: '2 losing trades within 60 min (protections.losingTrades)',
      }),
    ]);
    expect(await statusTable(env)).toMatch(
      /\n {2}x: no new entries until [^\n]* UTC: 2 losing trades within 60 min \(protections\.losingTrades\)\n/,
    );
    expect(events(db, 'exit-triggered').map((e) => e.reason)).toEqual(['trailing-stop', 'trailing-stop']);
    expect(paperBuys(db)).toBe(2);
    expect(paperSells(db)).toBe(2);
  }, 150_000);
});

describe('maxDrawdown, killed -9 between the losing fill and the protection', () => {
  const suite = paperLiveUpstream('e2e-drawdown-', 20_000);
  const high = highs(suite);
  it('trips once at the restart and refuses every entry after', async () => {
    const { db } = suite;
    const env = suite.env({
      'x.json': strategyFile({
        entries: 1_000,
        exits: { trailingStopPct: 1 },
        protections: { maxDrawdown: { pct: 3, pauseMinutes: 60 } },
      }),
    });
    // One trade: bought at 20,000, high 20,100, stopped out at 19,000 (5 % down, over the 3 % allowed): the 2nd fill.
    await killedAt(env, 'after-fill-record:2', async (first) => {
      await waitFor('the entry to fill', () => filled(db, 'entry') === 1, { daemon: first });
      await high(first, 20_100);
      suite.price(19_000);
    });
    expect(fillCount(db)).toBe(2);
    expect(events(db, 'protection-tripped')).toEqual([]);

    await restarted(env, db, 'an entry refused by the protection', () => refusedBy(db, /maxDrawdown/).length > 0);
    const tripped = events(db, 'protection-tripped');
    expect(tripped).toHaveLength(1);
    expect(tripped[0]).toMatchObject({ protection: 'maxDrawdown' });
    expect(String(tripped[0]!.reason)).toMatch(
      /^closed trades 5\.\d+ % under their best \(protections\.maxDrawdown, 3 %\)$/,
    );
    expect(paperBuys(db)).toBe(1);
    expect(paperSells(db)).toBe(1);
  }, 150_000);
});

describe('cooldown, killed -9 between the stop-out and its sale', () => {
  const suite = paperLiveUpstream('e2e-cooldown-', 20_000);
  const high = highs(suite);
  it('sells once after the restart and refuses every entry until the cooldown ends', async () => {
    const { db } = suite;
    const env = suite.env({
      'x.json': strategyFile({
        entries: 1_000,
        exits: { trailingStopPct: 1 },
        protections: { cooldownMinutes: 60 },
      }),
    });
    // Entry at 20,000, high 20,100, stopped out at 19,700: the exit is journaled and the daemon dies before it leaves.
    await killedAt(env, 'after-journal:2', async (first) => {
      await waitFor('the entry to fill', () => filled(db, 'entry') === 1, { daemon: first });
      await high(first, 20_100);
      suite.price(19_700);
    });
    expect(events(db, 'exit-triggered')).toEqual([expect.objectContaining({ reason: 'trailing-stop', price: 19_700 })]);

    // Restarted: the exit goes out once, and the flat instance's entries meet the cooldown the stop-out started.
    await restarted(
      env,
      db,
      'the exit filled and an entry refused by the cooldown',
      () => filled(db, 'exit:trailing-stop') === 1 && refusedBy(db, /cooldown after a stop-out/).length > 0,
      // Status and the API show the cooldown the sale started (the restart decided the stop-out again).
      (x) => expect(x.protections).toEqual([shown(events(db, 'protection-tripped').at(-1)!)]),
    );
    expect(events(db, 'protection-tripped')).toEqual([cooldown('trailing-stop'), cooldown('trailing-stop')]);
    expect(String(refusedBy(db, /cooldown/)[0]!.reason)).toMatch(/\(protections\.cooldownMinutes\)$/);
    expect(paperBuys(db)).toBe(1);
    expect(paperSells(db)).toBe(1);
    // The exit never left: the restart found it not placed and the same stop sold once.
    expect(
      orders(db)
        .filter((r) => r.tag === 'exit:trailing-stop')
        .map((r) => r.status),
    ).toEqual(['NOT_PLACED', 'FILLED']);
  }, 150_000);
});

describe('a held stop-loss, killed -9 between its fill on the exchange and the engine being told', () => {
  const suite = paperLiveUpstream('e2e-held-told-', 20_000);
  it('is reported once after the restart and starts the cooldown, which refuses every entry', async () => {
    const { db } = suite;
    const env = suite.env({
      'x.json': strategyFile({ entries: 2, exits: { stopLossPct: 2 }, protections: { cooldownMinutes: 60 } }),
    });
    // The entry (the 1st fill), the stop held on the exchange; the price through it fills it there (the 2nd fill,
    // committed), and the daemon dies before the engine hears of it.
    await killedAt(env, 'after-fill-record:2', async (first) => {
      const held = await waitFor('the stop held on the paper exchange', () => heldStopOnPaper(db), { daemon: first });
      expect(Number(held.stop_price)).toBeCloseTo((20_000 / 0.999) * 0.98, 1);
      suite.price(Number(held.stop_price) - 20);
    });
    expect(fillCount(db)).toBe(2);
    expect(heldStopOnPaper(db)?.status).toBe('FILLED');
    expect(events(db, 'held-exit-filled')).toEqual([]);

    const filledAt = readDb(db, (d) =>
      d.prepare("SELECT MAX(time) FROM fills WHERE side = 'SELL'").pluck().get(),
    ) as number;
    await restarted(
      env,
      db,
      'an entry refused by the cooldown',
      () => refusedBy(db, /cooldown after a stop-out/).length > 0,
      (x) => expect(x.protections).toEqual([shown(events(db, 'protection-tripped')[0]!)]),
    );
    expect(events(db, 'held-exit-filled')).toEqual([expect.objectContaining({ reason: 'stop-loss' })]);
    // The cooldown runs from the fill on the exchange, once.
    expect(events(db, 'protection-tripped')).toEqual([{ ...cooldown('stop-loss'), until: filledAt + 60 * 60_000 }]);
    expect(await statusTable(env)).toMatch(
      /\n {2}x: no new entries until [^\n]* UTC: cooldown of 60 min after a stop-out \(stop-loss\)/,
    );
    expect(events(db, 'exit-triggered')).toEqual([]);
    expect(paperBuys(db)).toBe(1);
    expect(paperTypes(db)).toEqual(['STOP_LIMIT']);
    expect(String(refusedBy(db, /cooldown/)[0]!.reason)).toMatch(/\(protections\.cooldownMinutes\)$/);
  }, 150_000);
});

/** The held stops (STOP_LIMIT SELLs) on the paper exchange's ledger, by status. */
const paperStops = (db: string) =>
  paperOrders(db, 'SELL')
    .filter((o) => o.type === 'STOP_LIMIT')
    .map((o) => o.status);
const stopRows = (db: string) =>
  orders(db)
    .filter((r) => r.tag === 'exit:stop-loss')
    .map((r) => `${r.type} ${r.status}`);

describe.each(['after-journal:2', 'after-send:2'])('the held stop, killed -9 at %s of its placement', (point) => {
  const suite = paperLiveUpstream('e2e-held-place-', 20_000);
  it('is held on the exchange exactly once after the restart', async () => {
    const { db } = suite;
    const env = suite.env({ 'x.json': strategyFile({ entries: 1, exits: { stopLossPct: 2 } }) });
    // The entry fills (the 1st order), then the engine places the stop (the 2nd): the daemon dies there.
    await killedAt(env, point, async (first) => {
      await waitFor('the entry to fill', () => filled(db, 'entry') === 1, { daemon: first });
    });
    expect(stopRows(db)).toEqual(['STOP_LIMIT PENDING']);
    await restarted(env, db, 'one stop held on the paper exchange', () => stopRows(db).includes('STOP_LIMIT OPEN'));
    // It reached the exchange: found there and kept. It never left: not placed, and placed once at the restart.
    expect(paperStops(db)).toEqual(['NEW']);
    expect(stopRows(db)).toEqual(
      point.startsWith('after-send') ? ['STOP_LIMIT OPEN'] : ['STOP_LIMIT NOT_PLACED', 'STOP_LIMIT OPEN'],
    );
  }, 150_000);
});

describe('a held stop gapped under its limit, killed -9 between its cancel and the sale at market', () => {
  const suite = paperLiveUpstream('e2e-held-gap-', 20_000);
  it('sells once at market after the restart, and holds no stop again under the price', async () => {
    const { db } = suite;
    const env = suite.env({ 'x.json': strategyFile({ entries: 1, exits: { stopLossPct: 2 } }) });
    await killedAt(env, 'exit-after-cancel', async (first) => {
      const held = await waitFor('the stop held on the paper exchange', () => heldStopOnPaper(db), { daemon: first });
      // Under the stop (19,619.62) and under its limit (0.5 % lower): triggered there, the limit cannot fill, so
      // the engine's stop-loss on ticks cancels it to sell at market, and the daemon dies after the cancel.
      expect(held.status).toBe('NEW');
      suite.price(19_400);
    });
    expect(stopRows(db)).toEqual(['STOP_LIMIT CANCELED']);
    expect(paperStops(db)).toEqual(['CANCELED']);
    expect(events(db, 'exit-triggered')).toEqual([expect.objectContaining({ reason: 'stop-loss', price: 19_400 })]);

    await restarted(env, db, 'the exit at market filled', () => stopRows(db).includes('MARKET FILLED'));
    expect(stopRows(db)).toEqual(['STOP_LIMIT CANCELED', 'MARKET FILLED']);
    expect(paperTypes(db)).toEqual(['STOP_LIMIT', 'MARKET']);
    expect(paperSells(db)).toBe(2);
    expect(events(db, 'exit-held')).toHaveLength(1);
  }, 150_000);
});

describe("the held OCO bracket's take-profit, filled while the daemon is down (kill -9)", () => {
  const suite = paperLiveUpstream('e2e-held-bracket-', 20_000);
  it('is the one exit after the restart, a roi exit: no cooldown starts', async () => {
    const { db } = suite;
    const env = suite.env({
      'x.json': strategyFile({
        entries: 1,
        exits: { stopLossPct: 2, roi: { '0': 2 } },
        protections: { cooldownMinutes: 60 },
      }),
    });
    const bracket = () => paperOrders(db, 'SELL');
    const first = new DaemonProcess({ ...env, ...EXTRA });
    const [held] = await waitFor('the bracket held on the paper exchange', () => bracket().length > 0 && bracket(), {
      daemon: first,
    });
    // Its legs from the average entry (20,020.02): the take-profit 2 % over it, the stop 2 % under it.
    expect(held).toMatchObject({ type: 'OCO', status: 'NEW' });
    expect(Number(held!.price)).toBeCloseTo((20_000 / 0.999) * 1.02, 1);
    expect(Number(held!.stop_price)).toBeCloseTo((20_000 / 0.999) * 0.98, 1);
    expect(await first.stop('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });

    // While it is down the price rises through the take-profit.
    suite.price(20_500);
    await restarted(env, db, 'the bracket filled', () => bracket()[0]?.status === 'FILLED');
    expect(bracket().map((r) => `${r.type} ${r.status}`)).toEqual(['OCO FILLED']);
    expect(stopRows(db)).toEqual([]);
    expect(orders(db).filter((r) => r.side === 'SELL')).toEqual([
      { side: 'SELL', type: 'OCO', tag: 'exit:bracket', status: 'FILLED' },
    ]);
    const sold = readDb(db, (d) => d.prepare("SELECT price FROM fills WHERE side = 'SELL'").pluck().all()) as string[];
    expect(sold).toHaveLength(1);
    expect(Number(sold[0])).toBeGreaterThanOrEqual(Number(held!.price));
    expect(events(db, 'held-exit-filled')).toEqual([expect.objectContaining({ reason: 'roi' })]);
    expect(events(db, 'exit-triggered')).toEqual([]);
    expect(events(db, 'protection-tripped')).toEqual([]);
  }, 150_000);
});
