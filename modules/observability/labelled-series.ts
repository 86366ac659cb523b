import type { Metric, Registry } from 'prom-client';

type Labels<L extends string> = Record<L, string>;

/**
 * A counter or histogram whose series are found by their label values (one Map per label name) and
 * updated in place. prom-client validates the label names and builds a hash string of the label set on
 * every observe or inc; the request path makes about eight of those per request. Here that work is
 * done once per series, when it first appears.
 *
 * What a scrape sees is exactly what prom-client's own Counter and Histogram export (the same values,
 * series in the order they first appeared, labels in the order the first update named them; the test
 * suite compares both texts), so a registry, the cluster aggregator and /metrics cannot tell them apart.
 */
abstract class LabelledMetric<L extends string, S> {
  readonly aggregator = 'sum' as const;
  private series = new Map<string, unknown>();
  private all: S[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly L[],
    registers: readonly Registry[],
  ) {
    if (labelNames.length === 0) throw new Error(`${name}: a metric without labels is prom-client's own`);
    // The registry's contract is duck-typed (name, help, type, get, reset); prom-client types it as its own class.
    for (const registry of registers) registry.registerMetric(this as unknown as Metric<string>);
  }

  abstract readonly type: 'counter' | 'histogram';
  abstract get(): Promise<unknown>;
  protected abstract create(labels: Labels<L>): S;

  /**
   * The series of a label set, created on first use with that label object (its key order is the
   * export's). Label names are checked when a series is created (the types check them at every call).
   */
  protected seriesOf(labels: Labels<L>): S {
    const names = this.labelNames;
    const last = names.length - 1;
    let level = this.series;
    for (let i = 0; i < last; i++) {
      const value = labels[names[i]];
      let next = level.get(value) as Map<string, unknown> | undefined;
      if (next === undefined) {
        next = new Map();
        level.set(value, next);
      }
      level = next;
    }
    const found = level.get(labels[names[last]]) as S | undefined;
    if (found !== undefined) return found;
    for (const name of Object.keys(labels)) {
      if (!names.includes(name as L)) throw new Error(`Added label "${name}" is not included in initial labelset: ${JSON.stringify(names)}`);
    }
    const created = this.create(labels);
    level.set(labels[names[last]], created);
    this.all.push(created);
    return created;
  }

  protected get everySeries(): readonly S[] {
    return this.all;
  }

  reset(): void {
    this.series = new Map();
    this.all = [];
  }
}

interface CounterSeries<L extends string> {
  labels: Labels<L>;
  value: number;
}

/** A labelled counter (prom-client's Counter without exemplars), for the label sets of the request path. */
export class LabelledCounter<L extends string> extends LabelledMetric<L, CounterSeries<L>> {
  readonly type = 'counter' as const;

  constructor(config: { name: string; help: string; labelNames: readonly L[]; registers: readonly Registry[] }) {
    super(config.name, config.help, config.labelNames, config.registers);
  }

  inc(labels: Labels<L>, value = 1): void {
    // prom-client's checks, as they are (a NaN passes them).
    if (value && !Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    if (value < 0) throw new Error('It is not possible to decrease a counter');
    this.seriesOf(labels).value += value;
  }

  protected create(labels: Labels<L>): CounterSeries<L> {
    return { labels, value: 0 };
  }

  async get(): Promise<{ name: string; help: string; type: 'counter'; values: Array<{ value: number; labels: Labels<L> }>; aggregator: 'sum' }> {
    return { help: this.help, name: this.name, type: this.type, values: this.everySeries.map(({ value, labels }) => ({ value, labels })), aggregator: this.aggregator };
  }
}

interface HistogramSeries<L extends string> {
  labels: Labels<L>;
  /** Observations per bucket (not cumulative), in the order of the bounds. */
  buckets: number[];
  sum: number;
  count: number;
}

interface HistogramValue {
  labels: Record<string, string | number>;
  value: number;
  metricName: string;
  exemplar?: null;
}

/** A labelled histogram (prom-client's Histogram without exemplars), for the label sets of the request path. */
export class LabelledHistogram<L extends string> extends LabelledMetric<L, HistogramSeries<L>> {
  readonly type = 'histogram' as const;
  private readonly bounds: readonly number[];

  constructor(config: { name: string; help: string; labelNames: readonly L[]; buckets: readonly number[]; registers: readonly Registry[] }) {
    super(config.name, config.help, config.labelNames, config.registers);
    for (const label of config.labelNames) if ((label as string) === 'le') throw new Error('le is a reserved label keyword');
    this.bounds = [...config.buckets];
  }

  observe(labels: Labels<L>, value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    const series = this.seriesOf(labels);
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]) {
        series.buckets[i]++;
        break;
      }
    }
    series.sum += value;
    series.count++;
  }

  protected create(labels: Labels<L>): HistogramSeries<L> {
    return { labels, buckets: this.bounds.map(() => 0), sum: 0, count: 0 };
  }

  /** For the text format: each line's own labels (`le`) apart from the series' (prom-client's shape). */
  async getForPromString(): Promise<{ name: string; help: string; type: 'histogram'; values: Array<HistogramValue & { sharedLabels: Labels<L> }>; aggregator: 'sum' }> {
    const values: Array<HistogramValue & { sharedLabels: Labels<L> }> = [];
    const bucketName = `${this.name}_bucket`;
    for (const series of this.everySeries) {
      let cumulative = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        cumulative += series.buckets[i];
        values.push({ labels: { le: this.bounds[i] }, sharedLabels: series.labels, value: cumulative, metricName: bucketName, exemplar: null });
      }
      values.push(
        { labels: { le: '+Inf' }, sharedLabels: series.labels, value: series.count, metricName: bucketName, exemplar: null },
        { labels: {}, sharedLabels: series.labels, value: series.sum, metricName: `${this.name}_sum`, exemplar: undefined },
        { labels: {}, sharedLabels: series.labels, value: series.count, metricName: `${this.name}_count`, exemplar: undefined },
      );
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** For JSON (the cluster aggregator): each line's labels merged with the series' (`le` first). */
  async get(): Promise<{ name: string; help: string; type: 'histogram'; values: HistogramValue[]; aggregator: 'sum' }> {
    const exported = await this.getForPromString();
    const values = exported.values.map(({ sharedLabels, labels, ...line }) => Object.assign(line, { labels: { ...labels, ...sharedLabels } }));
    // eslint-disable-next-line no-restricted-syntax -- overrides a key it has: the shape is shared
    return { ...exported, values };
  }
}
