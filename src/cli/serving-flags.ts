import { declareSettings } from '../kernel/setting-declaration.js';
import { textSetting } from '../kernel/settings.js';

/**
 * V8 flags a Switchyard process starts with: `npm start` and the bench's gateway processes pass them
 * (test/unit/serving-flags.test.ts keeps the two in step, and SERVING_ENV below with them); a `switchyard` command started otherwise takes
 * them from NODE_OPTIONS (docs/operations.md "Process flags and memory"). Cluster workers inherit them.
 *
 * The request path allocates many short-lived objects per request. With V8's default 16 MB semi-spaces,
 * enough of them are still alive at a scavenge under load to be promoted, and collecting them again in
 * the old generation showed up as a quarter of the gateway's CPU. A larger young generation lets them die
 * young. Measured (bench, pg-default, buffered, alternating runs): c=32 2,290 / 2,161 → 3,090 / 2,849 rps,
 * gateway CPU 0.38 / 0.32 → 0.26 / 0.29 ms per request, P99 added at 300 rps 9.8 / 10.4 → 5.5 / 6.3 ms; 32 MB
 * measured as 64 MB did, for less memory. The space grows only when allocation calls for it.
 *
 * `--single-threaded-gc`: the collector works on the main thread only, with no helper threads. A gateway is
 * busy on every core it has (one process, or SWITCHYARD_WORKERS = cores, with its database and upstreams
 * beside it), so helper threads did not shorten pauses but competed for the same cores, and waking them for
 * each small scavenge cost more than the work they took over. Measured (bench, pg-default, alternating
 * rounds on the 2-core machine): c=32 2,275 / 2,021 / 2,608 → 2,514 / 2,249 / 2,868 rps; gateway CPU per
 * request at 300 rps 1.23 / 1.02 / 1.18 → 0.85 / 0.83 ms (one round disturbed), added P50 at 300 rps
 * 1.95 / 1.70 / 1.77 → 1.21 / 1.13 ms; 1,000 slow streams 267 → 273 MB peak. Node refuses this flag in
 * NODE_OPTIONS: it goes on the command line (docs/operations.md "Process flags and memory").
 *
 * `--no-allocation-site-pretenuring`: V8 allocates straight into the old generation from an allocation
 * site whose objects it saw survive. Some of the request path's sites qualify under load (their objects
 * live across a scavenge while the request is in flight), and then every request's object from there is
 * old from birth: once the request ends it is dead, but only a full collection finds out, and until then
 * everything young it points to survives each scavenge and is promoted in turn. The young generation is
 * sized (above) for request objects to die there, so nothing on this path needs pretenuring. Measured
 * (bench, pg-default, 300 rps then c=32, 10 s each, three interleaved rounds): promoted bytes over a run
 * 137-147 → 101-106 MB, scavenge pauses 792-834 → 644-684 ms in all, c=32 2,064-2,113 → 2,074-2,278 rps.
 * Node refuses it in NODE_OPTIONS too.
 */
export const NODE_FLAGS: readonly string[] = ['--max-semi-space-size=32', '--single-threaded-gc', '--no-allocation-site-pretenuring'];

/**
 * The environment a Switchyard process starts with, where the operator has not set it: `npm start` sets
 * it, the primary of SWITCHYARD_WORKERS gives it to each worker it forks, the bench's processes get it.
 *
 * `MALLOC_ARENA_MAX=2`: glibc gives every thread that allocates its own malloc arena (up to eight per
 * core) and keeps what each arena once held; V8's compiler threads, libuv's pool and the embedded engine's
 * thread make several. Two arenas held the memory down with no cost measured in throughput. Measured
 * (bench, pg-default): 1,000 slow streams peaked at 304 / 282 / 299 MB against 324 / 318 / 320 MB (three
 * alternating rounds); c=32 throughput over seven alternating rounds 1,741 against 1,795 rps on average
 * and CPU per request 0.710 against 0.693 ms, both within the rounds' spread (1,467–2,102 rps). glibc reads
 * it once, when the process starts, so it cannot be set from inside.
 *
 * `MALLOC_MMAP_THRESHOLD_=131072`: glibc serves a block of 128 kB or more from a mapping of its own and
 * unmaps it when it is freed, but each time such a block is freed it raises that threshold to the block's
 * size (up to 32 MB), and from then on blocks of that size come from the arenas, whose free memory stays
 * resident. A fixed threshold keeps every such block in a mapping of its own. The embedded default gains
 * (probably from the engine's results, which cross from its thread a page of events at a time; not traced).
 * Measured (bench, pglite-default, c=32 and 300 rps, then 1,000 slow streams; three alternating rounds on
 * stop 32's machine): peak RSS 468 / 469 / 464 → 451 / 452 / 438 MB, c=32 1,575 / 1,584 / 1,853 → 1,680 /
 * 1,692 / 1,956 rps (CPU per request 0.794 / 0.767 / 0.673 → 0.707 / 0.725 / 0.628 ms); pg-async over two
 * rounds unchanged (275 / 274 → 272 / 275 MB).
 */
export const SERVING_ENV: Readonly<Record<keyof typeof MALLOC_ENVIRONMENT, string>> = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072' };

/** glibc's variables that SERVING_ENV sets (read by glibc at process start; Switchyard only checks whether the operator set them). */
export const MALLOC_ENVIRONMENT = declareSettings('src/cli', {
  MALLOC_ARENA_MAX: {
    type: 'integer > 0',
    default: 'unset; `npm start` and the primary of SWITCHYARD_WORKERS set `2`',
    meaning: "glibc's. Two malloc arenas instead of up to eight per core held the memory of 1,000 slow streams 20–35 MB lower, with no throughput cost measured. A process started otherwise needs it in its environment",
  },
  MALLOC_MMAP_THRESHOLD_: {
    type: 'integer > 0 (bytes)',
    default: 'unset; `npm start` and the primary of SWITCHYARD_WORKERS set `131072`',
    meaning: "glibc's. A fixed threshold keeps every block of 128 kB or more in a mapping of its own, given back when freed: the embedded default peaked 13–26 MB lower",
  },
});

/** SERVING_ENV without the variables `env` already sets: an operator's own value wins. */
export function servingEnvFor(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.values(MALLOC_ENVIRONMENT).filter((setting) => textSetting(env, setting) === undefined).map(({ name }) => [name, SERVING_ENV[name]]));
}
