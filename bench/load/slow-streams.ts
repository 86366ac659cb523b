import { Pool } from 'undici';
import { type Distribution, distribution } from '../measure/summary.js';
import { drainBy } from './drain.js';
import type { Sample } from './sample.js';
import { type RequestSpec, timedRequest } from './timed-request.js';

export interface SlowStreamsOptions {
  streams: number;
  /** The streams are opened evenly over this time, not in one burst. */
  rampMs: number;
  /** Longest wait for the streams to end after the last one was opened. */
  drainMs: number;
}

export interface SlowStreamsResult {
  requested: number;
  ok: number;
  errors: Record<string, number>;
  errorSamples: Record<string, string>;
  /** Most streams that had received their first event and not yet ended, at one moment. */
  maxConcurrent: number;
  /** Whether every stream was open at once (the moment the target's RSS is read). */
  plateauReached: boolean;
  ttfb: Distribution | null;
  duration: Distribution | null;
}

/**
 * Holds `streams` SSE responses open at once against a provider that trickles its chunks, so the
 * runner can read the target's memory with every stream in flight. `onPlateau` fires when all of them
 * have started and none has ended yet.
 */
export async function slowStreams(origin: string, spec: RequestSpec, options: SlowStreamsOptions, onPlateau: () => void): Promise<SlowStreamsResult> {
  const pool = new Pool(origin, { connections: options.streams, pipelining: 1, headersTimeout: 120_000, bodyTimeout: 120_000 });
  let open = 0;
  let maxConcurrent = 0;
  let started = 0;
  let ended = 0;
  let plateauReached = false;
  const samples: Sample[] = [];
  const pending: Array<Promise<void>> = [];
  const interval = options.rampMs / options.streams;
  const start = performance.now();
  for (let i = 0; i < options.streams; i++) {
    const due = start + i * interval;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    let counted = false;
    const observer = {
      firstByte() {
        counted = true;
        open++;
        started++;
        maxConcurrent = Math.max(maxConcurrent, open);
        if (!plateauReached && started === options.streams && ended === 0) {
          plateauReached = true;
          onPlateau();
        }
      },
    };
    pending.push(
      timedRequest(pool, spec, due, observer).then((sample) => {
        if (counted) open--;
        ended++;
        samples.push(sample);
      }),
    );
  }
  await drainBy(Promise.all(pending), performance.now() + options.drainMs, () => pool.destroy(), () => samples);
  await pool.close().catch(() => undefined);
  const errors: Record<string, number> = {};
  const errorSamples: Record<string, string> = {};
  for (const sample of samples) {
    if (sample.outcome === 'ok') continue;
    errors[sample.outcome] = (errors[sample.outcome] ?? 0) + 1;
    if (sample.errorBody) errorSamples[sample.outcome] ??= sample.errorBody;
  }
  const ok = samples.filter((s) => s.outcome === 'ok');
  return {
    requested: options.streams,
    ok: ok.length,
    errors,
    errorSamples,
    maxConcurrent,
    plateauReached,
    ttfb: distribution(ok.map((s) => s.firstByteAt - s.due)),
    duration: distribution(ok.map((s) => s.endAt - s.due)),
  };
}
