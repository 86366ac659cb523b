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

/** Whether a compiled suite's path (dist/test/<dir>/<name>.test.js) is one of the quiet suites. */
export function isQuietSuite(path) {
  const normalised = path.replaceAll('\\', '/');
  return QUIET_SUITES.some((suite) => normalised.endsWith(`/test/${suite}.test.js`));
}

// The parallel group's longest suites, longest first, whatever jest's timing cache holds: started last, one
// of them would keep one worker busy long after the other ran out of suites. (Measured on the 2-core
// reference machine; with services set, the two-process limits and audit-chain suites join them.)
export const LONG_SUITES = [
  'integration/apply-cli',
  'integration/limits-two-processes',
  'integration/postgres-outage',
  'integration/store-migration',
  'integration/cli-while-running',
  'integration/reconcile',
  'e2e/log-boundaries',
  'integration/store-migration-xids',
  'integration/audit-chain',
  'integration/admin-token-reset',
  'integration/deploy-image',
  'e2e/http-hardening',
  'e2e/runtime-lifecycle-restart',
  'e2e/quick-start-restart',
  'integration/database-faults',
  'integration/secret-hygiene',
  'integration/log-order',
  'e2e/content-safety-matrix', // 830 requests and three hostile bodies of up to 4 MiB: about 50 s
];

/** Where a compiled suite stands in LONG_SUITES (-1: not one of them). */
export function longSuiteRank(path) {
  const normalised = path.replaceAll('\\', '/');
  return LONG_SUITES.findIndex((suite) => normalised.endsWith(`/test/${suite}.test.js`));
}
