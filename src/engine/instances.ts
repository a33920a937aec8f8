/**
 * The engine's instances, made from the strategy files (and the pairs a pair list takes up later: add), and the
 * indexes the jobs read: by name (the operator's controls, fills), by symbol (a tick), by schedule then symbol (a
 * market job).
 */
import { ConfigError } from '../errors.js';
import type { InstanceCounters, InstanceRunner, InstanceSpec } from './instance-runner.js';
import type { InstanceStatus } from './instance-lifecycle.js';

export interface InstanceSummary {
  name: string;
  symbol: string;
  schedule: string;
  status: InstanceStatus;
  reason: string | undefined;
  counters: Readonly<InstanceCounters>;
}

/** Instances keyed by symbol: what a tick looks up. */
export type BySymbol = ReadonlyMap<string, readonly InstanceRunner[]>;

export class Instances {
  /** Every instance, in the order of the strategy files (then of the pairs a pair list took up since the start). */
  readonly all: readonly InstanceRunner[];
  /** The symbols the instances trade. */
  readonly symbols: ReadonlySet<string>;
  readonly bySymbol: BySymbol;
  private readonly list: InstanceRunner[] = [];
  private readonly symbolSet = new Set<string>();
  private readonly symbolIndex = new Map<string, InstanceRunner[]>();
  private readonly byName = new Map<string, InstanceRunner>();
  private readonly bySchedule = new Map<string, Map<string, InstanceRunner[]>>();
  /** Per schedule, the symbols its market job reads: its instances' and the informative pairs they read. */
  private readonly watchedBySchedule = new Map<string, Set<string>>();

  /** Throws a ConfigError when two strategy files name the same instance. */
  constructor(
    specs: readonly InstanceSpec[],
    private readonly make: (spec: InstanceSpec) => InstanceRunner,
  ) {
    this.all = this.list;
    this.symbols = this.symbolSet;
    this.bySymbol = this.symbolIndex;
    const problems: string[] = [];
    for (const spec of specs) {
      if (this.byName.has(spec.config.name))
        problems.push(`instance name ${spec.config.name} is used by more than one strategy file`);
      this.byName.set(spec.config.name, this.make(spec));
    }
    if (problems.length > 0) throw new ConfigError(problems);
    for (const r of this.byName.values()) this.index(r);
  }

  /**
   * An instance made after the start (a pair a pair list takes up when the exchange lists it): indexed like the
   * others, so every job sees it from now on. Undefined when an instance has that name already.
   */
  add(spec: InstanceSpec): InstanceRunner | undefined {
    if (this.byName.has(spec.config.name)) return undefined;
    const r = this.make(spec);
    this.byName.set(r.name, r);
    this.index(r);
    return r;
  }

  private index(r: InstanceRunner): void {
    this.list.push(r);
    this.symbolSet.add(r.symbol);
    let list = this.symbolIndex.get(r.symbol);
    if (!list) this.symbolIndex.set(r.symbol, (list = []));
    list.push(r);
    let group = this.bySchedule.get(r.schedule);
    if (!group) this.bySchedule.set(r.schedule, (group = new Map<string, InstanceRunner[]>()));
    let sameSymbol = group.get(r.symbol);
    if (!sameSymbol) group.set(r.symbol, (sameSymbol = []));
    sameSymbol.push(r);
    let watched = this.watchedBySchedule.get(r.schedule);
    if (!watched) this.watchedBySchedule.set(r.schedule, (watched = new Set()));
    watched.add(r.symbol);
    for (const symbol of r.informativeLimits.keys()) watched.add(symbol);
  }

  named(name: string): InstanceRunner | undefined {
    return this.byName.get(name);
  }

  /** The distinct schedules of the instances: one market job each. */
  schedules(): string[] {
    return [...this.bySchedule.keys()];
  }

  /** The instances on `schedule`, by symbol (undefined: no instance has it). */
  onSchedule(schedule: string): BySymbol | undefined {
    return this.bySchedule.get(schedule);
  }

  /** The symbols the market job of `schedule` reads: its instances' own and their informative pairs. */
  watched(schedule: string): ReadonlySet<string> | undefined {
    return this.watchedBySchedule.get(schedule);
  }

  /** Intents processed over all instances (the backtest's cheap test of whether anything happened). */
  intentsProcessed(): number {
    let n = 0;
    for (let i = 0; i < this.all.length; i++) n += (this.all[i] as InstanceRunner).counters.intents;
    return n;
  }

  /** A running instance has fills to be delivered (a loop, not a closure: the orders poll asks on every tick). */
  deliveryPending(): boolean {
    for (let i = 0; i < this.all.length; i++) if ((this.all[i] as InstanceRunner).deliveryPending) return true;
    return false;
  }

  summaries(): InstanceSummary[] {
    return this.all.map((r) => ({
      name: r.name,
      symbol: r.symbol,
      schedule: r.schedule,
      status: r.status,
      reason: r.reason,
      counters: { ...r.counters },
    }));
  }
}
