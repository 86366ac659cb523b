import type { ServerResponse } from 'node:http';
import type { RelayedStreamEvent } from '../../canonical/index.js';
import type { ChatRequest } from '../../canonical/index.js';
import type { StoredAnswer } from '../../cache/index.js';
import type { ClientFormat, ResponseIdentity } from '../formats/client-format.js';
import { SseResponse } from './sse-response.js';

/**
 * Writes a stored answer (an exact-cache hit, an idempotent replay) in the asking client's format:
 * buffered JSON, or — for a streaming request — SSE through the same stream encoder a live answer uses,
 * so SDKs see an ordinary stream (opening frames, content, finish, usage if asked for, end marker).
 */
export async function replyWithStoredAnswer(
  raw: ServerResponse,
  format: ClientFormat,
  request: ChatRequest,
  answer: StoredAnswer,
  identity: ResponseIdentity,
  headers: Record<string, string>,
): Promise<void> {
  if (raw.destroyed) return;
  if (!request.stream) {
    const body = JSON.stringify(format.encodeChat(answer.response, identity, answer.usage, request));
    raw.writeHead(200, Object.assign({}, headers, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) }));
    raw.end(body);
    return;
  }
  const encoder = format.streamEncoder(identity, request);
  const sse = new SseResponse(raw, headers);
  sse.open(encoder.contentType);
  for (const event of streamEventsOf(answer)) await sse.write(encoder.encode(event));
  sse.end(encoder.finish(answer.usage));
}

/** A complete answer as the stream events that would have produced it: each choice's text, tool calls, finish. */
function* streamEventsOf(answer: StoredAnswer): Generator<RelayedStreamEvent> {
  for (const choice of answer.response.choices) {
    if (choice.text.length > 0 || choice.toolCalls.length === 0) yield { type: 'text', choice: choice.index, text: choice.text };
    for (const [index, call] of choice.toolCalls.entries()) {
      yield { type: 'tool_call', choice: choice.index, index, id: call.id, name: call.name, arguments: call.arguments, ...(call.signature !== undefined ? { signature: call.signature } : {}) };
    }
    const finish: RelayedStreamEvent = { type: 'finish', choice: choice.index, stopReason: choice.stopReason };
    if (choice.stopSequence !== undefined) finish.stopSequence = choice.stopSequence;
    yield finish;
  }
}
