/**
 * Counters and histograms for what every start moves (docs/decisions/093-metrics-off-the-start-path.md):
 * prom-client's own turn each observation's labels into a sorted key and check them, about ten
 * times a start. These keep a series per label value found once by a key the caller makes, and
 * move plain numbers; prom-client's registry reads them at a scrape, in the shape its own
 * metrics give (its `get()`), so the exposition is the same text.
 */
import type { Metric, Registry } from 'prom-client';

/** One line of a scrape as prom-client's registry formats it: `metricName{labels,sharedLabels} value`. */
interface ScrapedValue {
  readonly labels: Readonly<Record<string, string | number>>;
  readonly sharedLabels?: Readonly<Record<string, string>>;
  readonly value: number;
  readonly metricName?: string;
}

/** What the registry reads of a metric (prom-client's `get()` shape). */
export interface ScrapedMetric {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'histogram';
  readonly aggregator: 'sum';
  readonly values: readonly ScrapedValue[];
}

/** One series of a hot counter: its labels and its count. */
export interface CounterSeries {
  readonly labels: Readonly<Record<string, string>>;
  value: number;
}

/** One series of a hot histogram: its labels, its count per bucket (not cumulative), sum and count. */
export interface HistogramSeries {
  readonly labels: Readonly<Record<string, string>>;
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

/** What registers a metric with a registry that only reads it (`Registry.registerMetric`'s parameter). */
function register(registry: Registry, metric: object): void {
  // The registry reads `name`, `help`, `type` and `get()`; prom-client's class type asks for the rest of its API.
  registry.registerMetric(metric as unknown as Metric);
}

/** A counter whose series are found by a key of their label values (see the top of this file). */
export class HotCounter {
  readonly type = 'counter';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, CounterSeries>();

  constructor(
    readonly name: string,
    readonly help: string,
    registry: Registry,
  ) {
    register(registry, this);
  }

  /** The series of `key` (one string per set of label values), made with `labels()` the first time. */
  of(key: string, labels: () => Record<string, string>): CounterSeries {
    let s = this.series.get(key);
    if (s === undefined) this.series.set(key, (s = { labels: labels(), value: 0 }));
    return s;
  }

  /** The registry's read (prom-client's `Counter.get()` shape). */
  get(): ScrapedMetric {
    const values = [...this.series.values()].map((s) => ({ labels: s.labels, value: s.value }));
    return { name: this.name, help: this.help, type: 'counter', aggregator: 'sum', values };
  }
}

/** A histogram whose series are found by a key of their label values (see the top of this file). */
export class HotHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, HistogramSeries>();

  constructor(
    readonly name: string,
    readonly help: string,
    /** Upper bounds, ascending (the `le` of each bucket but +Inf). */
    readonly buckets: readonly number[],
    registry: Registry,
  ) {
    register(registry, this);
  }

  /** The series of `key` (one string per set of label values), made with `labels()` the first time. */
  of(key: string, labels: () => Record<string, string>): HistogramSeries {
    let s = this.series.get(key);
    if (s === undefined)
      this.series.set(key, (s = { labels: labels(), counts: new Float64Array(this.buckets.length), sum: 0, count: 0 }));
    return s;
  }

  /** Counts `value` in series `s` (a value past every bound counts only in +Inf, the count). */
  observe(s: HistogramSeries, value: number): void {
    const bounds = this.buckets;
    for (let i = 0; i < bounds.length; i++)
      if (value <= bounds[i]!) {
        s.counts[i]!++;
        break;
      }
    s.sum += value;
    s.count++;
  }

  /** The registry's read (prom-client's `Histogram.get()` shape: cumulative buckets, +Inf, sum, count). */
  get(): ScrapedMetric {
    const values: ScrapedValue[] = [];
    const bucket = `${this.name}_bucket`;
    for (const s of this.series.values()) {
      // As prom-client gives them: `le` first, the series' labels after (shared by its lines).
      let acc = 0;
      for (let i = 0; i < this.buckets.length; i++) {
        acc += s.counts[i]!;
        values.push({ labels: { le: this.buckets[i]! }, sharedLabels: s.labels, value: acc, metricName: bucket });
      }
      values.push({ labels: { le: '+Inf' }, sharedLabels: s.labels, value: s.count, metricName: bucket });
      values.push({ labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: 'histogram', aggregator: 'sum', values };
  }
}
