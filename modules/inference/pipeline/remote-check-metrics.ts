import type { RemoteCheckObserver } from '../../content-safety/index.js';
import type { Observability } from '../../observability/index.js';

/** Remote content checks' reports, as the gateway's metrics: latency per policy and outcome, failures per reason. */
export function remoteCheckMetrics(observability: Observability): RemoteCheckObserver {
  const metrics = observability.metrics;
  return {
    checked: (policy, check, outcome, seconds) => metrics.guardrailCheckDuration.observe({ policy, check, outcome }, seconds),
    failed: (policy, check, reason, resolution) => metrics.guardrailCheckErrors.inc({ policy, check, reason, resolution }),
  };
}
