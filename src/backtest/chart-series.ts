/**
 * The price and equity series for the report's charts, downsampled as the replay goes: per bucket of ticks
 * the lowest and the highest price are kept (so spikes survive), plus every tick at which a fill happened
 * (so each buy/sell marker sits on a point of the line). Display only: doubles are fine here.
 */
export interface ChartPoint {
  time: number;
  price: number;
  equity: number;
}

export class ChartSeries {
  readonly points: ChartPoint[] = [];
  private readonly bucket: ChartPoint[] = [];
  private low: ChartPoint | undefined;
  private high: ChartPoint | undefined;
  private count = 0;

  /** `ticksPerBucket`: e.g. the replay's length over the number of buckets wanted. */
  constructor(private readonly ticksPerBucket: number) {}

  add(time: number, price: number, equity: number, keep: boolean): void {
    if (keep) this.bucket.push({ time, price, equity });
    if (this.low === undefined || price < this.low.price) this.low = { time, price, equity };
    if (this.high === undefined || price > this.high.price) this.high = { time, price, equity };
    if (++this.count === this.ticksPerBucket) this.flush();
  }

  flush(): void {
    if (this.low) this.bucket.push(this.low);
    if (this.high && this.high !== this.low) this.bucket.push(this.high);
    this.bucket.sort((a, b) => a.time - b.time);
    for (const p of this.bucket) {
      const last = this.points[this.points.length - 1];
      if (last === undefined || p.time > last.time) this.points.push(p);
    }
    this.bucket.length = 0;
    this.low = undefined;
    this.high = undefined;
    this.count = 0;
  }
}
