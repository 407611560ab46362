/**
 * A Prometheus histogram whose observation is a map look-up and a few array writes. prom-client's
 * own validates the labels, builds a string of them and a closure at every observation, a
 * microsecond or more; a request observes several (itself, its statements, its transaction), and
 * the metrics may cost the hot path 5% at most. The registry reads this one at the scrape as it
 * reads its own (`get()`), and `--workers N` adds it up over the workers the same way ("sum").
 */
export class LightHistogram {
  readonly type = "histogram";
  readonly aggregator = "sum";
  private readonly all = new Map<string, Series>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly buckets: readonly number[],
  ) {}

  /** The series of `labels`, which `key` names (the same key, the same labels). */
  series(key: string, labels: () => Record<string, string | number>): Series {
    let series = this.all.get(key);
    if (!series) {
      series = { labels: labels(), counts: new Array<number>(this.buckets.length + 1).fill(0), sum: 0, count: 0 };
      this.all.set(key, series);
    }
    return series;
  }

  observe(series: Series, value: number): void {
    let bucket = 0;
    while (bucket < this.buckets.length && value > this.buckets[bucket]!) bucket++;
    series.counts[bucket]!++;
    series.sum += value;
    series.count++;
  }

  /** What prom-client's registry asks of a metric at each scrape. */
  get() {
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
    for (const { labels, counts, sum, count } of this.all.values()) {
      let cumulative = 0;
      for (let i = 0; i <= this.buckets.length; i++) {
        cumulative += counts[i]!;
        const le = i < this.buckets.length ? this.buckets[i]! : "+Inf";
        values.push({ labels: { ...labels, le }, value: cumulative, metricName: `${this.name}_bucket` });
      }
      values.push({ labels, value: sum, metricName: `${this.name}_sum` });
      values.push({ labels, value: count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    this.all.clear();
  }
}

interface Series {
  labels: Record<string, string | number>;
  /** per bucket, not cumulative; the last is above the highest bound */
  counts: number[];
  sum: number;
  count: number;
}
