/**
 * Issue 28: the journal under the engine's feet. A database file deleted or replaced while the bot runs stops
 * trading for good (the connection would go on writing to a file no restart reads); a write the disk refuses
 * leaves nothing in the journal cache, stops sending, and trading resumes by itself once writes succeed again,
 * reconciled first.
 */
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { captureLogger } from '../support/capture-logger.js';
import { buyEveryTick, diskFull, firstTick, Harness, instance, matching } from './harness.js';

let h: Harness;
const dbFile = () => join(h.dir, 'bot.db');

const changes = {
  deleted: () => rmSync(dbFile()),
  replaced: () => {
    writeFileSync(`${dbFile()}.new`, '');
    renameSync(`${dbFile()}.new`, dbFile());
  },
};

for (const [what, change] of Object.entries(changes)) {
  it(`a database file ${what} while running: no order is sent again, the loss recorded once`, async () => {
    h = new Harness();
    h.price(100);
    const engine = await h.start([instance('a', buyEveryTick)]);
    await h.tick(100);
    expect(h.venue.creates).toBe(1);
    expect(engine.journalProblem()).toBeUndefined();

    change();
    await h.tick(100);
    await h.tick(100);
    expect(h.venue.creates).toBe(1);
    expect(engine.journalProblem()).toMatch(new RegExp(`trading stopped: database file .*bot\\.db was ${what}`));
    expect(h.events('journal-lost')).toEqual([
      expect.objectContaining({ data: { reason: matching(new RegExp(`was ${what} while the bot was running`)) } }),
    ]);
    expect(h.events('refused').at(-1)?.data.reason).toMatch(/trading stopped: database file/);
  });
}

it('a commit the full disk refuses: nothing cached, nothing sent; trading resumes by itself once writes succeed', async () => {
  h = new Harness();
  h.price(100);
  const engine = await h.start([instance('a', buyEveryTick)]);
  const disk = diskFull(h.store);
  disk.on = true;
  await h.marketTick(100); // a-1's journal row: its commit fails, so it is never sent
  expect(h.venue.creates).toBe(0);
  expect(h.store.orders.active()).toEqual([]);
  expect(engine.journalProblem()).toMatch(/^journal write failed \(database or disk is full\): no order is sent/);

  // Still full: the poll's probe write fails, so it reads nothing and says why; the next tick sends nothing.
  await expect(engine.pollOrders()).rejects.toThrow(/journal still refuses writes/);
  await h.marketTick(100);
  expect(h.venue.creates).toBe(0);

  // Space comes back: the poll's probe succeeds, it reconciles every symbol, and orders may go again.
  disk.on = false;
  await engine.pollOrders();
  expect(engine.journalProblem()).toBeUndefined();
  expect(h.events('journal-recovered')).toHaveLength(1);
  await h.tick(100);
  expect(h.venue.creates).toBe(1);
  const [placed] = h.store.orders.active();
  expect(placed).toMatchObject({ instance: 'a', status: 'OPEN' });
  // The polls after recovery find every journaled order (the failed one never reached the cache): its fill
  // is recorded.
  await h.tick(89);
  expect(h.store.orders.get(placed!.localId)?.status).toBe('FILLED');
  expect(h.store.fills.forOrder(placed!.localId)).toHaveLength(1);
});

it('a read-only journal is one incident in the log: a line when it starts, a count a minute, a line when it ends', async () => {
  h = new Harness();
  h.price(100);
  const log = captureLogger();
  const engine = await h.start([instance('a', buyEveryTick)], { logger: log.logger });
  await h.tick(100);
  const before = log.lines.length;
  // Every write refused, the events' too (a full or read-only disk), for 130 s of ticks a second apart.
  h.store.db.pragma('query_only = ON');
  for (let s = 1; s <= 130; s++) {
    await h.marketTick(100, 1_000);
    if (s % 5 === 0) await expect(Promise.resolve(engine.pollOrders())).rejects.toThrow(/journal still refuses writes/);
  }
  expect(h.venue.creates).toBe(1);
  h.store.db.pragma('query_only = OFF');
  await h.tick(100, 1_000);
  const told = log.lines
    .slice(before)
    .map((l) => JSON.parse(l) as { level: number; msg: string })
    .filter((l) => l.level >= 40)
    .map((l) => l.msg);
  expect(told).toEqual([
    'journal write failed (attempt to write a readonly database): no order is sent until a write succeeds and orders are reconciled',
    'journal writes still failing: 60 order(s) refused over 60 s',
    'journal writes still failing: 120 order(s) refused over 120 s',
    'journal writes succeed again after 130 s (130 order(s) refused meanwhile); orders reconciled, trading resumes',
  ]);
  // Trading resumed: the next tick's order went out.
  await h.tick(100, 1_000);
  expect(h.venue.creates).toBe(2);
});

it('a fill whose transaction rolled back is recorded by the next poll (its trade is not taken for recorded), once across a restart', async () => {
  h = new Harness();
  h.price(100);
  const rest = instance(
    'a',
    firstTick((ctx) => ctx.limit('BUY', '90', '0.01', { tag: 'rest' })),
  );
  await h.start([rest]);
  await h.tick(100);
  const [placed] = h.store.orders.active();
  // The fill's transaction fails after its insert (its order row refused): the insert is rolled back with it.
  const journal = h.store.orders;
  const update = journal.update.bind(journal);
  let refuse = true;
  journal.update = (row) => {
    if (refuse && row.fillSource !== undefined) {
      refuse = false;
      throw new Error('order row refused');
    }
    update(row);
  };
  await h.tick(89);
  expect(refuse).toBe(false);
  expect(h.store.fills.forOrder(placed!.localId)).toEqual([]);
  // The next poll reads the trade again and records it: it was never recorded, whatever the first poll saw.
  await h.tick(89);
  expect(h.store.fills.forOrder(placed!.localId)).toMatchObject([{ price: '90', qty: '0.01' }]);
  expect(h.store.orders.get(placed!.localId)?.status).toBe('FILLED');
  // After a restart the trade is read again (its lookback) and found recorded: not recorded twice.
  await h.restart([rest]);
  await h.tick(89);
  expect(h.store.fills.forOrder(placed!.localId)).toHaveLength(1);
  expect(h.store.fills.positions.tracker('a').book.quantity.toFixed()).toBe('0.00999'); // net of its fee in BTC
});
