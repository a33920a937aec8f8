/**
 * Fills, from their record to the strategy (docs/architecture.md, the path of one order): once the fill recorder
 * has committed a fill, the instance's position takes it, its declared exits and protections see it, and its
 * balances are to be read again; then, at the end of an orders poll (or a start), each running instance's
 * undelivered fills go to its onFill one by one, each marked delivered with the state in one transaction, and the
 * intents that hook queued are processed.
 */
import { D } from '../market/decimal.js';
import type { FillView } from '../strategy/api.js';
import type { FillRow } from '../store/fills.js';
import type { OrderRow } from '../store/order-journal.js';
import type { EngineParts } from './engine-parts.js';
import type { DeclaredExits } from './exits/declared-exits.js';
import type { FillSink } from './fill-recorder.js';
import { type InstanceRunner, isPromise, orderView } from './instance-runner.js';
import type { Instances } from './instances.js';
import type { TickPath } from './tick-path.js';
import type { VenueReads } from './venue-reads.js';

export class FillDelivery implements FillSink {
  /**
   * By instance, its fills onFill has not seen, as the journal holds them (FillStore.undelivered): read from the
   * journal at an instance's first delivery after a start, then kept here as fills are recorded (once committed)
   * and marked delivered (once committed), so a delivery reads no fill back. An instance absent has its read to come.
   */
  private readonly undelivered = new Map<string, FillRow[]>();

  constructor(
    private readonly p: EngineParts,
    private readonly roster: Instances,
    private readonly exits: DeclaredExits,
    private readonly reads: VenueReads,
    /** onFill's intents go the way of a tick's. */
    private readonly ticks: TickPath,
  ) {}

  /** A fill was recorded (its transaction committed): the position, the counters, the exits, onFill's queue. */
  fillRecorded(row: OrderRow, fill: FillRow): void {
    if (row.instance !== undefined && !fill.delivered) this.undelivered.get(row.instance)?.push(fill);
    this.reads.fillRecorded(row, fill);
    this.p.logger.info(
      {
        instance: row.instance,
        localId: row.localId,
        exchangeId: row.exchangeId,
        side: fill.side,
        price: fill.price,
        quantity: fill.qty,
        fee: fill.fee,
        feeAsset: fill.feeAsset,
      },
      'fill recorded',
    );
    if (row.instance === undefined) return;
    const r = this.roster.named(row.instance);
    if (!r) return;
    const before = r.position;
    r.fillRecorded(fill);
    this.exits.filled(r, row, fill, before);
    this.p.journal.fillRecorded(row.localId);
  }

  /** The engine starts (its journal loaded again): each instance's undelivered fills are read from the journal. */
  load(): void {
    this.undelivered.clear();
  }

  /** Every instance's undelivered fills to its onFill. The caller holds the engine's lock. */
  async deliverAll(): Promise<void> {
    for (const r of this.roster.all) await this.deliver(r);
  }

  /** Delivers the instance's undelivered fills to onFill, each marked delivered with the state saved in one transaction. */
  private async deliver(r: InstanceRunner): Promise<void> {
    if (!r.takeFillsToDeliver()) return;
    const { store, journal } = this.p;
    let waiting = this.undelivered.get(r.name);
    if (waiting === undefined) this.undelivered.set(r.name, (waiting = store.fills.undelivered(r.name)));
    // A copy: a fill recorded meanwhile (onFill may be async) waits for the next delivery, as it did when read.
    for (const f of [...waiting]) {
      if (r.status !== 'running') break;
      const row = journal.get(f.orderLocalId);
      if (!row) continue;
      const view: FillView = {
        fillId: f.fillKey,
        order: orderView(row),
        side: f.side,
        price: new D(f.price),
        quantity: new D(f.qty),
        fee: new D(f.fee),
        feeAsset: f.feeAsset,
        time: f.time,
      };
      // onFill is the news of this fill: the order leaves the strategy's view as it is told (the last fill of
      // a filled order), and comes back if the hook fails.
      journal.fillDelivered(f.orderLocalId);
      let ok = r.callFill(view);
      if (isPromise(ok)) ok = await ok;
      if (!ok) {
        // Paused: the fill stays undelivered, so a fixed strategy sees it after a restart.
        journal.fillRecorded(f.orderLocalId);
        r.fillsUndelivered();
        return;
      }
      store.transaction(() => {
        store.fills.markDelivered(f.fillKey);
        r.saveState();
      });
      // Committed (a transaction that failed threw, and the fill stays waiting, in the journal and here).
      const at = waiting.indexOf(f);
      if (at >= 0) waiting.splice(at, 1);
      await this.ticks.processQueued(r);
    }
  }
}
