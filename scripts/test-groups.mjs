// The suites `npm test` runs on their own, one at a time, after the rest has run in parallel: each asserts
// a wall-clock bound of a second or less (a node hearing a change within a second, a disconnect reaching
// upstream within 100 ms, a stream 400 ms under way when SIGTERM arrives) that a neighbour loading the same
// two cores can push past its limit. Everything else runs in parallel workers: suites isolate themselves
// (databases, ClickHouse databases, Redis namespaces and ports of their own), and their bounds were written
// for a loaded machine (the failover chain's 6 s, event-loop ticks at a quarter of the timer's rate while
// PGlite works in its thread, the two-process limits' windows) and have held beside a neighbour in every
// CI run since CI has had two workers.
export const QUIET_SUITES = [
  // A change on node A reaches node B within 1 s (LISTEN/NOTIFY, then the snapshot rebuilt).
  'integration/propagation',
  // Time to first token and stream durations against the provider's delays; a disconnect aborts upstream within 100 ms.
  'e2e/resilience-streaming',
  // A stream under way for 400 ms when SIGTERM arrives, then drained within the grace period.
  'e2e/graceful-shutdown',
];

/**
 * Suites that spend most of their minute waiting — on a window of traffic at a few requests a second, an
 * outage held for the 30 s the acceptance names, breaker cooldowns, a relay's retry delays — rather than on the
 * CPU. They run in a lane of their own (one worker, one suite after another) beside the parallel group instead of
 * holding one of its two workers for minutes while the cores idle; their bounds were written for a neighbour.
 */
export const WAITING_SUITES = [
  // 20 clients at 600 RPM for a whole minute over two processes, then a budget run with a kill -9.
  'integration/limits-two-processes',
  // Steady traffic through a 30 s PostgreSQL outage, then the spool draining.
  'integration/postgres-outage',
  // Breaker cooldowns of 10 s shared through Redis.
  'integration/breaker-redis',
  // The relay's backoff while a broker is away.
  'e2e/relay-envelopes',
  // Brokers of its own stopped and restarted under the relay (backoff from 0.5 s), a projector killed and replaced.
  'integration/relay-brokers',
  // Backends terminated under load, then waits for the pool, LISTEN and readiness to recover by themselves.
  'integration/database-faults',
];

/** Whether a compiled suite's path is one of the waiting suites. */
export function isWaitingSuite(path) {
  const normalised = path.replaceAll('\\', '/');
  return WAITING_SUITES.some((suite) => normalised.endsWith(`/test/${suite}.test.js`));
}

/** Whether a compiled suite's path (dist/test/<dir>/<name>.test.js) is one of the quiet suites. */
export function isQuietSuite(path) {
  const normalised = path.replaceAll('\\', '/');
  return QUIET_SUITES.some((suite) => normalised.endsWith(`/test/${suite}.test.js`));
}

// The parallel group's longest suites, longest first, whatever jest's timing cache holds: started last, one
// of them would keep one worker busy long after the other ran out of suites. Ordered by a full run's
// per-suite durations (2-core machine, services set, after the suites were made faster in branch ci-time);
// every suite not listed took under 30 s.
export const LONG_SUITES = [
  'integration/limits-two-processes', // a whole minute of rate-limited traffic by design
  'integration/store-migration',
  'e2e/relay-envelopes',
  'integration/serving-topology',
  'integration/consume-clickhouse-analytics',
  'integration/cli-while-running',
  'integration/postgres-outage', // a 30 s outage by design
  'e2e/log-boundaries',
  'integration/cli-start-up',
  'integration/pglite-thread',
  'integration/store-migration-xids',
  'integration/cost-ledger',
  'integration/relay-brokers',
  'integration/admin-token-reset',
  'integration/deploy-image',
  'integration/config-ownership',
  'integration/apply-cli',
  'e2e/third-party-clients',
  'integration/breaker-redis',
  'integration/projection-commit-flush',
  'e2e/vercel-ai-sdk',
  'integration/database-faults',
  'integration/transaction-round-trips',
  'integration/audit-chain',
  'integration/clickhouse-crash',
  'integration/relay-own-rabbitmq',
];

/** Where a compiled suite stands in LONG_SUITES (-1: not one of them). */
export function longSuiteRank(path) {
  const normalised = path.replaceAll('\\', '/');
  return LONG_SUITES.findIndex((suite) => normalised.endsWith(`/test/${suite}.test.js`));
}
