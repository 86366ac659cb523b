/**
 * Loaded into the gateway with `--import` (the runner's --gateway-phases DIR): when each /v1/ request
 * reaches the steps of its path, on the gateway's own monotonic clock, and when the durable projections'
 * pages and the collector's pauses ran, written on exit as DIR/phases-<pid>.json for `phases.js`.
 * A CPU profile says what the gateway's thread computes; this says where a request's wall time goes,
 * including the waits no profile samples (the database's answer, a thread that is not scheduled).
 *
 * The marks come from diagnostics channels (Node's HTTP server, undici, Fastify's handler) and from four
 * prototype methods wrapped here (the request journal's admission, the group committer's append, the
 * projection runner's page, the response's first write). A renamed method makes the probe fail at start
 * instead of recording nothing. Nothing of a request's content is recorded: timestamps, and for a page
 * its projection's name and event count.
 */
import dc from 'node:diagnostics_channel';
import { AsyncLocalStorage } from 'node:async_hooks';
import type { ServerResponse } from 'node:http';
import { PerformanceObserver, performance } from 'node:perf_hooks';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PhaseRecord, PhaseSamples } from './phase-samples.js';

const dir = process.env.BENCH_PHASES_DIR;

if (dir) {
  const requests: PhaseRecord[] = [];
  const pages: PhaseSamples['pages'] = [];
  const pauses: PhaseSamples['pauses'] = [];
  const current = new AsyncLocalStorage<PhaseRecord>();
  const byUpstream = new WeakMap<object, PhaseRecord>();
  const now = () => performance.now();

  // Published by Node before the 'request' event, in the request's own async context: what the request
  // runs from here on (its hooks, its pipeline, its upstream call, its append) sees its record.
  dc.subscribe('http.server.request.start', (message) => {
    const { request, response } = message as { request: { url?: string }; response: ServerResponse };
    if (!request.url?.startsWith('/v1/')) return;
    const record: PhaseRecord = { start: now() };
    requests.push(record);
    current.enterWith(record);
    const write = response.write;
    response.write = function (this: ServerResponse, ...args: unknown[]) {
      record.firstWrite ??= now();
      return (write as (...a: unknown[]) => boolean).apply(this, args);
    } as ServerResponse['write'];
    response.once('finish', () => (record.finish = now()));
  });
  dc.subscribe('tracing:fastify.request.handler:start', () => {
    const record = current.getStore();
    if (record) record.handler ??= now();
  });
  dc.subscribe('undici:request:create', (message) => {
    const record = current.getStore();
    if (!record) return;
    record.dispatch ??= now();
    byUpstream.set((message as { request: object }).request, record);
  });
  dc.subscribe('undici:client:sendHeaders', (message) => {
    const record = byUpstream.get((message as { request: object }).request);
    if (record) record.upstreamSent ??= now();
  });
  dc.subscribe('undici:request:headers', (message) => {
    const record = byUpstream.get((message as { request: object }).request);
    if (record) record.upstreamHeaders ??= now();
  });
  dc.subscribe('undici:request:trailers', (message) => {
    const record = byUpstream.get((message as { request: object }).request);
    if (record) record.upstreamEnd = now();
  });
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) pauses.push([entry.startTime, entry.duration]);
  }).observe({ entryTypes: ['gc'] });

  const wrap = <T extends object>(prototype: T, method: string, around: (original: (...a: unknown[]) => unknown) => (...a: unknown[]) => unknown) => {
    const target = prototype as Record<string, unknown>;
    const original = target[method];
    if (typeof original !== 'function') throw new Error(`phase probe: ${method} is not a method any more; update bench/profile/phase-probe.ts`);
    target[method] = around(original as (...a: unknown[]) => unknown);
  };
  const dist = new URL('../../', import.meta.url);
  const { RequestJournal } = await import(new URL('modules/inference/pipeline/request-journal.js', dist).href);
  const { GroupCommitter } = await import(new URL('src/kernel/event-store/group-committer.js', dist).href);
  const { ProjectionRunner } = await import(new URL('src/kernel/projections/projection-runner.js', dist).href);

  wrap(RequestJournal.prototype, 'admit', (original) => function (this: unknown, ...args: unknown[]) {
    const record = current.getStore();
    if (record) record.admitted ??= now();
    return original.apply(this, args);
  });
  wrap(GroupCommitter.prototype, 'append', (original) => function (this: unknown, ...args: unknown[]) {
    const record = current.getStore();
    const appendedAt = now();
    const result = original.apply(this, args) as Promise<unknown>;
    if (record) {
      record.append = appendedAt;
      result.then(() => (record.committed = now()), () => undefined);
    }
    return result;
  });
  wrap(ProjectionRunner.prototype, 'applyPage', (original) => async function (this: unknown, ...args: unknown[]) {
    const began = now();
    try {
      return await original.apply(this, args);
    } finally {
      const [worker, events] = args as [{ name: string }, unknown[]];
      if (events.length > 0) pages.push([began, now() - began, worker.name, events.length]);
    }
  });

  process.on('exit', () => {
    // Lets `between` place a CPU profile's samples (taken in the same run) on the marks' clock.
    const hrOffsetUs = Number(process.hrtime.bigint()) / 1e3 - performance.now() * 1e3;
    const samples: PhaseSamples = { pid: process.pid, requests, pages, pauses, hrOffsetUs };
    writeFileSync(join(dir, `phases-${process.pid}.json`), JSON.stringify(samples));
  });
}
