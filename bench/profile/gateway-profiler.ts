/**
 * Loaded into the gateway with `--import` (the runner's --gateway-profile DIR): V8's sampling CPU profiler
 * from the gateway's first /v1/ request (start-up excluded) to its exit, written as
 * DIR/gateway-<pid>.cpuprofile with the number of /v1/ requests it saw, so that `summarize` can say
 * microseconds per request. Node refuses --cpu-prof in NODE_OPTIONS; this is the same profiler through
 * the inspector module. Nothing of a request is recorded but its count. A `switchyard projector` (a -px
 * variant) serves no HTTP: it is profiled from its start, into DIR/projector-<pid>.cpuprofile.
 * With BENCH_PROFILE_KIND=heap (--gateway-heap-profile) it is V8's sampling heap profiler instead, counting
 * objects the collector has freed too (so it says what was allocated, not what is still alive), into
 * DIR/<process>-<pid>.heapprofile. With BENCH_PROFILE_KIND=survivors (--gateway-survivor-profile) objects
 * freed by a young-generation collection are left out: what is left outlived at least one scavenge, which
 * is what a scavenge copies (its pause) and promotes (the old generation's growth).
 */
import { Server } from 'node:http';
import { Session } from 'node:inspector';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.env.BENCH_PROFILE_DIR;
const intervalUs = Number(process.env.BENCH_PROFILE_INTERVAL_US ?? 200);
const isProjector = process.argv[2] === 'projector';
const kind = process.env.BENCH_PROFILE_KIND;
const heap = kind === 'heap' || kind === 'survivors';
/** Bytes between heap samples: fine enough for per-request shares, coarse enough not to slow the gateway much. */
const HEAP_SAMPLING_BYTES = 16 * 1024;

if (dir) {
  const session = new Session();
  session.connect();
  let starting = false;
  let started = false;
  let requests = 0;
  const start = () => {
    starting = true;
    if (heap) {
      session.post('HeapProfiler.enable', () => session.post('HeapProfiler.startSampling', {
        samplingInterval: HEAP_SAMPLING_BYTES, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: kind !== 'survivors',
      }, () => (started = true)));
      return;
    }
    session.post('Profiler.enable', () => session.post('Profiler.setSamplingInterval', { interval: intervalUs }, () =>
      session.post('Profiler.start', () => (started = true))));
  };
  if (isProjector) start();
  const emit = Server.prototype.emit;
  Server.prototype.emit = function (this: Server, event: string, ...args: unknown[]) {
    if (event === 'request' && (args[0] as { url?: string }).url?.startsWith('/v1/')) {
      if (!starting) start();
      if (started) requests++;
    }
    return (emit as (this: Server, event: string, ...rest: unknown[]) => boolean).call(this, event, ...args);
  } as Server['emit'];
  // The in-process session answers synchronously, so the profile can still be taken on exit.
  process.on('exit', () => {
    if (!started) return;
    const name = `${isProjector ? 'projector' : 'gateway'}-${process.pid}`;
    if (heap) {
      session.post('HeapProfiler.stopSampling', (error, result) => {
        if (error) return;
        writeFileSync(join(dir, `${name}.heapprofile`), JSON.stringify({ ...result.profile, requests }));
      });
      return;
    }
    session.post('Profiler.stop', (error, result) => {
      if (error) return;
      writeFileSync(join(dir, `${name}.cpuprofile`), JSON.stringify({ ...result.profile, requests }));
    });
  });
}
