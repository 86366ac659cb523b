import { AggregatorRegistry, Counter, Histogram, Registry } from 'prom-client';
import { LabelledCounter, LabelledHistogram } from '../../modules/observability/labelled-series.js';

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** The same metrics twice: prom-client's own, and the labelled ones the request path uses. */
function pair() {
  const reference = new Registry();
  const labelled = new Registry();
  const config = {
    requests: { name: 'requests_total', help: 'Requests, by "operation" and \\ status.', labelNames: ['operation', 'alias', 'status_class'] as const },
    duration: { name: 'duration_seconds', help: 'Duration.', labelNames: ['operation', 'alias', 'status_class'] as const, buckets: BUCKETS },
    tokens: { name: 'token_usage', help: 'Tokens.', labelNames: ['operation', 'token_type', 'alias'] as const, buckets: [1, 16, 256, 4096] },
  };
  return {
    reference,
    labelled,
    prom: {
      requests: new Counter({ ...config.requests, registers: [reference] }),
      duration: new Histogram({ ...config.duration, registers: [reference] }),
      tokens: new Histogram({ ...config.tokens, registers: [reference] }),
    },
    ours: {
      requests: new LabelledCounter({ ...config.requests, registers: [labelled] }),
      duration: new LabelledHistogram({ ...config.duration, registers: [labelled] }),
      tokens: new LabelledHistogram({ ...config.tokens, registers: [labelled] }),
    },
  };
}

describe('labelled counters and histograms', () => {
  it('export exactly what prom-client exports for the same updates, as text and as JSON', async () => {
    const { reference, labelled, prom, ours } = pair();
    let seed = 99;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    const pick = <T>(values: readonly T[]) => values[Math.floor(random() * values.length)];
    const aliases = ['chat', 'solo', '', 'with "quotes"', 'back\\slash', 'new\nline'];
    for (let i = 0; i < 2_000; i++) {
      const operation = pick(['chat', 'embeddings', 'count_tokens']);
      const alias = pick(aliases);
      const status = pick(['2xx', '4xx', '5xx']);
      // Label objects in different key orders: the first update of a series decides its export order.
      const labels = random() < 0.5 ? { operation, alias, status_class: status } : { status_class: status, operation, alias };
      const amount = pick([undefined, 0, 1, 0.000036, 2.5]);
      if (amount === undefined) {
        prom.requests.inc({ ...labels });
        ours.requests.inc({ ...labels });
      } else {
        prom.requests.inc({ ...labels }, amount);
        ours.requests.inc({ ...labels }, amount);
      }
      const seconds = pick([0, 0.001, 0.005, 0.0051, 0.3, 5, 7.5, 120, random()]);
      prom.duration.observe({ ...labels }, seconds);
      ours.duration.observe({ ...labels }, seconds);
      const tokenLabels = { operation, alias, token_type: pick(['input', 'output']) };
      const count = Math.floor(random() * 10_000);
      prom.tokens.observe({ ...tokenLabels }, count);
      ours.tokens.observe({ ...tokenLabels }, count);
    }
    expect(await labelled.metrics()).toBe(await reference.metrics());
    expect(await labelled.getMetricsAsJSON()).toEqual(await reference.getMetricsAsJSON());
    // The cluster aggregator sums workers' JSON by metric type: the same result from either.
    const aggregate = async (registry: Registry) => (await AggregatorRegistry.aggregate([await registry.getMetricsAsJSON(), await registry.getMetricsAsJSON()]).metrics());
    expect(await aggregate(labelled)).toBe(await aggregate(reference));
  });

  it('start empty again after a reset, and export nothing before the first update', async () => {
    const { reference, labelled, prom, ours } = pair();
    expect(await labelled.metrics()).toBe(await reference.metrics());
    prom.requests.inc({ operation: 'chat', alias: 'a', status_class: '2xx' });
    ours.requests.inc({ operation: 'chat', alias: 'a', status_class: '2xx' });
    reference.resetMetrics();
    labelled.resetMetrics();
    prom.duration.observe({ operation: 'chat', alias: 'b', status_class: '5xx' }, 0.2);
    ours.duration.observe({ operation: 'chat', alias: 'b', status_class: '5xx' }, 0.2);
    expect(await labelled.metrics()).toBe(await reference.metrics());
  });

  it('refuse what prom-client refuses: an unknown label, a value that is not a number, a decrease', () => {
    const { ours } = pair();
    expect(() => ours.requests.inc({ operation: 'chat', alias: 'a', status_class: '2xx', tenant: 't' } as never)).toThrow(/not included/);
    expect(() => ours.requests.inc({ operation: 'chat', alias: 'a', status_class: '2xx' }, -1)).toThrow(/decrease/);
    expect(() => ours.requests.inc({ operation: 'chat', alias: 'a', status_class: '2xx' }, Number.POSITIVE_INFINITY)).toThrow(/not a valid number/);
    expect(() => ours.duration.observe({ operation: 'chat', alias: 'a', status_class: '2xx' }, Number.POSITIVE_INFINITY)).toThrow(/not a valid number/);
  });
});
