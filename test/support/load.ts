import { sseData } from './gateway-harness.js';

export type RequestKind = 'buffered' | 'stream' | 'disconnect' | 'invalid';

export interface LoadResult {
  kind: RequestKind;
  requestId: string | null;
  status: number;
  /** The client received the whole answer (JSON body, or SSE through [DONE]). */
  complete: boolean;
}

/** One request of the given kind; never throws (a dead server is a failed result). */
export async function sendRequest(baseUrl: string, key: string, kind: RequestKind, model = 'chat'): Promise<LoadResult> {
  const body =
    kind === 'invalid'
      ? { model, messages: 'not-a-list' }
      : { model, stream: kind !== 'buffered', messages: [{ role: 'user', content: `load ${Math.random()}` }] };
  const controller = new AbortController();
  try {
    const response = await fetch(`${baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: controller.signal,
    });
    const requestId = response.headers.get('x-request-id');
    if (kind === 'disconnect' && response.ok) {
      const reader = response.body!.getReader();
      await reader.read();
      controller.abort();
      return { kind, requestId, status: response.status, complete: false };
    }
    const text = await response.text();
    let complete = false;
    if (response.status === 200) {
      if (kind === 'buffered') {
        try {
          complete = Array.isArray(JSON.parse(text).choices);
        } catch {
          complete = false;
        }
      } else {
        complete = sseData(text).at(-1) === '[DONE]';
      }
    }
    return { kind, requestId, status: response.status, complete };
  } catch {
    return { kind, requestId: null, status: 0, complete: false };
  }
}

/** Runs `total` requests with `concurrency` workers; `pick` chooses each request's kind and alias. */
export async function runLoad(
  baseUrl: string,
  key: string,
  total: number,
  concurrency: number,
  pick: (index: number) => { kind: RequestKind; model: string },
): Promise<LoadResult[]> {
  const results: LoadResult[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const index = next++;
        const { kind, model } = pick(index);
        results.push(await sendRequest(baseUrl, key, kind, model));
      }
    }),
  );
  return results;
}
