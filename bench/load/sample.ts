import { type Distribution, distribution, round3 } from '../measure/summary.js';

/** How one request ended: `ok`, `http-<status>`, `incomplete-stream`, `timeout` or `network-<code>`. */
export type Outcome = string;

/** One request's timeline, in performance.now() milliseconds of the generator process. */
export interface Sample {
  /** When it was due: the scheduled time (open loop) or when the client issued it (closed loop). */
  due: number;
  /** When the generator handed it to undici: later than `due` only when the generator fell behind. */
  issuedAt: number;
  /** When undici started writing it to a socket (NaN if it never was): after `issuedAt` by any wait for a connection. */
  sentAt: number;
  /** First body byte received (NaN if none). */
  firstByteAt: number;
  endAt: number;
  outcome: Outcome;
  /** The start of an error response's body (what the target said went wrong). */
  errorBody?: string;
}

export type LoopKind = 'closed' | 'open';
export type Mode = 'buffered' | 'sse';

export interface LoadResult {
  loop: LoopKind;
  /** Connections (closed loop) or requests per second (open loop). */
  level: number;
  mode: Mode;
  windowMs: number;
  /** Requests the generator issued (open loop: the schedule's length). */
  issued: number;
  ok: number;
  errors: Record<Outcome, number>;
  /** The first error body seen for each outcome, shortened. */
  errorSamples: Record<Outcome, string>;
  /** Successful responses that ended inside the window, per second. */
  throughputRps: number;
  /** Successful requests, due time to the last byte. */
  latency: Distribution | null;
  /** Successful requests, due time to the first body byte (SSE: the first event). */
  ttfb: Distribution | null;
  /** Due time to handing the request to undici: the generator's own lateness. */
  issueLag: Distribution | null;
  /** Due time to the socket write: the generator's lateness plus any wait for a connection to the target. */
  sendLag: Distribution | null;
  /** Requests the generator issued more than `lateMs` after they were due: not sent on time. */
  late: number;
  /** null in a closed loop, where nothing is scheduled. */
  lateMs: number | null;
  /** Requests never written to a socket before the drain deadline. */
  unsent: number;
}

export interface SummaryContext {
  loop: LoopKind;
  level: number;
  mode: Mode;
  windowStart: number;
  windowEnd: number;
  lateMs: number | null;
}

/** Reduces a phase's samples to what the report needs; pure so the arithmetic is tested on its own. */
export function summarizeLoad(samples: readonly Sample[], ctx: SummaryContext): LoadResult {
  const latency: number[] = [];
  const ttfb: number[] = [];
  const issueLag: number[] = [];
  const lag: number[] = [];
  const errors: Record<Outcome, number> = {};
  const errorSamples: Record<Outcome, string> = {};
  let ok = 0;
  let okInWindow = 0;
  let late = 0;
  let unsent = 0;
  for (const sample of samples) {
    const lateness = sample.issuedAt - sample.due;
    issueLag.push(lateness);
    if (ctx.lateMs !== null && lateness > ctx.lateMs) late++;
    if (Number.isNaN(sample.sentAt)) unsent++;
    else lag.push(sample.sentAt - sample.due);
    if (sample.outcome !== 'ok') {
      errors[sample.outcome] = (errors[sample.outcome] ?? 0) + 1;
      if (sample.errorBody && errorSamples[sample.outcome] === undefined) errorSamples[sample.outcome] = sample.errorBody;
      continue;
    }
    ok++;
    if (sample.endAt <= ctx.windowEnd) okInWindow++;
    latency.push(sample.endAt - sample.due);
    if (!Number.isNaN(sample.firstByteAt)) ttfb.push(sample.firstByteAt - sample.due);
  }
  const windowMs = ctx.windowEnd - ctx.windowStart;
  return {
    loop: ctx.loop,
    level: ctx.level,
    mode: ctx.mode,
    windowMs: round3(windowMs),
    issued: samples.length,
    ok,
    errors,
    errorSamples,
    throughputRps: windowMs > 0 ? round3(okInWindow / (windowMs / 1000)) : 0,
    latency: distribution(latency),
    ttfb: distribution(ttfb),
    issueLag: distribution(issueLag),
    sendLag: distribution(lag),
    late,
    lateMs: ctx.lateMs,
    unsent,
  };
}
