/**
 * What the phase probe writes: for each /v1/ request the moments (ms, the gateway's `performance.now()`)
 * it reached each step; a step a request never reached (a refusal, a cache hit, a buffered answer's
 * first write) is absent.
 */
export interface PhaseRecord {
  /** Node parsed the request's headers. */
  start: number;
  /** The route's handler began: body read and parsed, every onRequest hook (authentication) passed. */
  handler?: number;
  /** Admitted (limits, cache, plan, budget): RequestAdmitted is handed to the request journal. */
  admitted?: number;
  /** The first upstream request was created. */
  dispatch?: number;
  /** undici wrote that request's headers to its socket. */
  upstreamSent?: number;
  upstreamHeaders?: number;
  /** The last upstream response ended. */
  upstreamEnd?: number;
  /** The request's (last) append was queued, and when it committed. */
  append?: number;
  committed?: number;
  /** The first body write to the client (an SSE answer's first frame). */
  firstWrite?: number;
  /** The response was handed to the operating system whole. */
  finish?: number;
}

export interface PhaseSamples {
  pid: number;
  requests: PhaseRecord[];
  /** Durable projection pages: [start, duration ms, projection, events]. */
  pages: Array<[number, number, string, number]>;
  /** Garbage-collection pauses: [start, duration ms]. */
  pauses: Array<[number, number]>;
  /**
   * `process.hrtime` in µs minus `performance.now()` in µs, read at exit: a CPU profile's sample times
   * (V8's TimeTicks, the same monotonic clock as hrtime) minus this are on the marks' clock, in µs.
   */
  hrOffsetUs?: number;
}
