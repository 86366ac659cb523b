import type { Dispatcher } from 'undici';
import type { Sample } from './sample.js';

/** The request every phase repeats: a chat completion, buffered or SSE. */
export interface RequestSpec {
  path: string;
  headers: Record<string, string>;
  body: string;
  stream: boolean;
}

/**
 * Sends one request through the raw dispatcher API, which costs the generator far less than
 * `request()` (no stream objects) and tells when undici really writes it to a socket.
 */
/** Optional hooks for a caller that follows streams while they are open (the slow-stream mode). */
export interface RequestObserver {
  firstByte(): void;
}

export function timedRequest(dispatcher: Dispatcher, spec: RequestSpec, due: number, observer?: RequestObserver): Promise<Sample> {
  return new Promise((resolve) => {
    const sample: Sample = { due, issuedAt: performance.now(), sentAt: NaN, firstByteAt: NaN, endAt: NaN, outcome: 'ok' };
    let status = 0;
    let tail = '';
    const finish = (outcome: string) => {
      sample.endAt = performance.now();
      sample.outcome = outcome;
      resolve(sample);
    };
    dispatcher.dispatch(
      { path: spec.path, method: 'POST', headers: spec.headers, body: spec.body },
      {
        onRequestStart() {
          sample.sentAt = performance.now();
        },
        onResponseStart(_controller, statusCode) {
          status = statusCode;
        },
        onResponseData(_controller, chunk) {
          if (Number.isNaN(sample.firstByteAt)) {
            sample.firstByteAt = performance.now();
            observer?.firstByte();
          }
          // The stream is complete only with its terminator; a short tail is enough to find it.
          if (status !== 200) sample.errorBody = ((sample.errorBody ?? '') + chunk.toString('utf8')).slice(0, 300);
          else if (spec.stream) tail = (tail + chunk.toString('latin1')).slice(-24);
        },
        onResponseEnd() {
          if (status !== 200) finish(`http-${status}`);
          else if (spec.stream && !tail.includes('[DONE]')) finish('incomplete-stream');
          else finish('ok');
        },
        onResponseError(_controller, error) {
          finish(errorOutcome(error));
        },
      },
    );
  });
}

function errorOutcome(error: Error): string {
  const code = (error as { code?: string }).code;
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return 'timeout';
  if (error.name === 'AbortError' || code === 'UND_ERR_ABORTED') return 'aborted';
  return `network-${code ?? error.name}`;
}
