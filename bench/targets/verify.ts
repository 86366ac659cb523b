import { request } from 'undici';
import type { Mode } from '../load/sample.js';
import type { HelperProcess } from '../processes/ipc.js';
import type { Verification } from '../report/bench-report.js';
import type { Target } from './target.js';

/** Sends one request and returns the answer's text content (buffered message or joined SSE deltas). */
export async function answerText(target: Target, mode: Mode): Promise<string> {
  const spec = target.request(mode);
  const response = await request(`${target.origin}${spec.path}`, { method: 'POST', headers: spec.headers, body: spec.body });
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`${target.id} answered ${response.statusCode} (${mode}): ${text.slice(0, 300)}`);
  return mode === 'sse' ? sseContent(text) : bufferedContent(text);
}

/**
 * Proves a target really reaches the mock and relays its answer: one request must cost exactly one
 * mock call and return the content the mock gives when called directly (not a cache, not an error).
 */
export async function verify(target: Target, mode: Mode, mock: HelperProcess, expected: string): Promise<Verification> {
  const before = await mock.call<number>('calls');
  const text = await answerText(target, mode);
  const after = await mock.call<number>('calls');
  return { upstreamCalls: after - before, answerMatches: text === expected };
}

export function bufferedContent(body: string): string {
  const parsed = JSON.parse(body) as { choices?: Array<{ message?: { content?: string } }> };
  return parsed.choices?.[0]?.message?.content ?? '';
}

export function sseContent(body: string): string {
  let content = '';
  for (const line of body.split('\n')) {
    if (!line.startsWith('data:')) continue;
    const data = line.slice(5).trim();
    if (data === '[DONE]' || !data) continue;
    const event = JSON.parse(data) as { choices?: Array<{ delta?: { content?: string } }> };
    content += event.choices?.[0]?.delta?.content ?? '';
  }
  if (!body.includes('[DONE]')) throw new Error('the stream did not end with [DONE]');
  return content;
}
