import { Counter } from 'prom-client';
import type { ProjectionRunner } from '../../src/kernel/index.js';
import type { RelayProjection } from '../relay/index.js';
import { LAG_COUNT_CAP } from './kernel-metrics.js';
import type { Observability } from './observability.js';

/**
 * The relay's numbers (docs/events-out.md), read at scrape time: how far it is behind the log (events
 * not yet acknowledged by the broker, on the node that holds its lease), what it published, and its
 * failures by kind (`unavailable`: retried after a backoff; `refused`: it stopped at that event, which
 * `switchyard_projection_halted{projection="relay"}` then shows).
 */
export function watchRelay(observability: Observability, runner: ProjectionRunner, relay: RelayProjection): void {
  const { metrics } = observability;
  metrics.gauge('switchyard_relay_lag_events', 'Events the relay of this process has not had acknowledged by the broker yet (capped at 1e6; absent where another node holds its lease).', [], async (gauge) => {
    const lag = (await runner.lag(LAG_COUNT_CAP).catch(() => [])).find((entry) => entry.name === relay.name);
    if (lag) gauge.set(lag.behind);
  }, 'max');
  new Counter({
    name: 'switchyard_relay_published_total',
    help: 'Events the relay published and the broker acknowledged (a page published again after a crash or a failure counts again).',
    registers: [metrics.registry],
    collect() {
      this.reset();
      this.inc(relay.stats.published);
    },
  });
  new Counter({
    name: 'switchyard_relay_errors_total',
    help: 'Relay publishes that failed: unavailable (broker away or slow; retried with backoff) or refused (the relay stops at that event).',
    labelNames: ['kind'] as const,
    registers: [metrics.registry],
    collect() {
      this.reset();
      this.inc({ kind: 'unavailable' }, relay.stats.unavailable);
      this.inc({ kind: 'refused' }, relay.stats.refused);
    },
  });
}
