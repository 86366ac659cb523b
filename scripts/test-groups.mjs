// The suites `npm test` runs on their own, one at a time, after the rest has run in parallel: each asserts
// a wall-clock bound or a rate (a node hearing a change within a second, a stream's first token after a
// delay, event-loop ticks while a thread works) or runs several gateway processes whose time windows a
// neighbour loading the same cores could push past their limits. Everything else runs in parallel workers:
// suites isolate themselves (databases, ClickHouse databases, Redis namespaces and ports of their own).
export const QUIET_SUITES = [
  // A change on node A reaches node B within 1 s (LISTEN/NOTIFY, then the snapshot rebuilt).
  'integration/propagation',
  // Event-loop ticks counted while PGlite works in its thread: a busy neighbour starves the ticks.
  'integration/pglite-thread',
  // Two gateway processes share one Redis: a 60-second window must hold exactly the limit across both.
  'integration/limits-two-processes',
  // Gateways of the suite's own through a PostgreSQL it stops and starts: spool timings and readiness.
  'integration/postgres-outage',
  // Time to first token and stream durations measured against the provider's configured delays.
  'e2e/resilience-streaming',
  // Failover within a deadline (the whole chain in under 6 s).
  'e2e/resilience-failover',
  // A stream under way for 400 ms when SIGTERM arrives, then drained within the grace period.
  'e2e/graceful-shutdown',
];

/** Whether a compiled suite's path (dist/test/<dir>/<name>.test.js) is one of the quiet suites. */
export function isQuietSuite(path) {
  const normalised = path.replaceAll('\\', '/');
  return QUIET_SUITES.some((suite) => normalised.endsWith(`/test/${suite}.test.js`));
}
