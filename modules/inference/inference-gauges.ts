import type { AdmissionControl, LimitsRedis } from '../limits/index.js';
import type { Observability } from '../observability/index.js';
import type { DeploymentHealth } from './resilience/deployment-health.js';

const BREAKER_STATE_VALUE = { closed: 0, 'half-open': 1, open: 2 } as const;

/**
 * The data plane's state as gauges, read at scrape time: breaker per deployment, requests and streams in
 * flight, and whether its limits are counted by this node alone.
 */
export function registerInferenceGauges(observability: Observability, health: DeploymentHealth, admission: AdmissionControl, limits: LimitsRedis): void {
  const { metrics } = observability;
  metrics.gauge('switchyard_breaker_state', 'Circuit breaker per deployment: 0 closed, 1 half-open, 2 open.', ['deployment'], (gauge) => {
    for (const breaker of health.describe()) gauge.set({ deployment: breaker.deploymentId }, BREAKER_STATE_VALUE[breaker.state]);
  }, 'max');
  metrics.gauge('switchyard_in_flight_requests', 'Requests holding an admission permit on this node.', [], (gauge) => gauge.set(admission.load().requests));
  metrics.gauge('switchyard_in_flight_streams', 'Streamed requests holding a stream permit on this node.', [], (gauge) => gauge.set(admission.load().streams));
  metrics.gauge('switchyard_admission_queued', 'Requests waiting in the admission queue.', [], (gauge) => gauge.set(admission.load().queued));
  metrics.gauge(
    'switchyard_limits_degraded',
    'Redis is configured but not answering: rate limits, budgets and shared concurrency are counted by this node alone (1) or shared (0).',
    [], (gauge) => gauge.set(limits.status().degraded ? 1 : 0), 'max',
  );
}
