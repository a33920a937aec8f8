/**
 * The daily summary: at a set UTC time, per instance its PnL of the UTC day (the day ending at the summary
 * time when that is 00:00), fills and fees of that day, open orders and position, as `bot status` shows them
 * (the same read model). It is recorded as a `daily-summary` event, which the notifier then sends like any
 * other: it shows in the events table, and a restart never sends one day's summary twice.
 */
import { D, type Dec, ZERO } from '../market/decimal.js';
import { buildStatusView, instanceRounder } from '../status/status-view.js';
import type { FeeIn } from '../store/fills.js';
import type { Store } from '../store/store.js';

const DAY_MS = 86_400_000;

/** The first time after `now` that is `minuteOfDay` minutes past 00:00 UTC. */
export function nextSummaryTime(now: number, minuteOfDay: number): number {
  const at = Math.floor(now / DAY_MS) * DAY_MS + minuteOfDay * 60_000;
  return at > now ? at : at + DAY_MS;
}

/** Whether the summary due at `at` is already recorded. */
export function summaryRecorded(store: Store, at: number): boolean {
  return store.events.list({ kinds: ['daily-summary'], sinceTime: at }).some((e) => e.data.at === at);
}

/** The summary's data: the read model one millisecond before `at`, so 00:00 sums up the day just ended. */
export function dailySummaryData(store: Store, at: number, killSwitchFile: string): Record<string, unknown> {
  const view = buildStatusView(store, { now: at - 1, killSwitchFile });
  return {
    at,
    day: new Date(at - 1).toISOString().slice(0, 10),
    instances: view.report.instances.map((i) => {
      // To the pair's precision, as the daemon last stored its rules (8 places where it never did).
      const r = instanceRounder(i, view.rules);
      const fees = new Map<string, { sum: Dec; feeIn: FeeIn }>();
      for (const f of i.todaysFills) {
        const asset = f.feeAsset ?? '?';
        fees.set(asset, { sum: (fees.get(asset)?.sum ?? ZERO).plus(new D(f.fee)), feeIn: f.feeIn });
      }
      return {
        instance: i.instance,
        state: i.state,
        realisedToday: r.quote(i.realisedToday),
        realisedPnl: r.quote(i.realisedPnl),
        unrealisedPnl: i.unrealisedPnl === undefined ? undefined : r.quote(i.unrealisedPnl),
        fills: i.todaysFills.length,
        fees: Object.fromEntries(
          [...fees].filter(([, f]) => !f.sum.isZero()).map(([a, f]) => [a, r.amount(f.sum, f.feeIn)]),
        ),
        openOrders: i.openOrders.length,
        position: { quantity: r.baseAsset(i.position.quantity), averagePrice: r.price(i.position.averagePrice) },
      };
    }),
  };
}
