/**
 * V8 flags a Switchyard process starts with: `npm start` and the bench's gateway processes pass them
 * (test/unit/serving-flags.test.ts keeps the two in step); a `switchyard` command started otherwise takes
 * them from NODE_OPTIONS (README, Configuration). Cluster workers inherit them.
 *
 * The request path allocates many short-lived objects per request. With V8's default 16 MB semi-spaces,
 * enough of them are still alive at a scavenge under load to be promoted, and collecting them again in
 * the old generation showed up as a quarter of the gateway's CPU. A larger young generation lets them die
 * young. Measured (bench, pg-default, buffered, alternating runs): c=32 2,290 / 2,161 → 3,090 / 2,849 rps,
 * gateway CPU 0.38 / 0.32 → 0.26 / 0.29 ms per request, P99 added at 300 rps 9.8 / 10.4 → 5.5 / 6.3 ms; 32 MB
 * measured as 64 MB did, for less memory. The space grows only when allocation calls for it.
 */
export const NODE_FLAGS: readonly string[] = ['--max-semi-space-size=32'];
