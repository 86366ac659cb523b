import { getChunkedStream } from '@smithy/core/event-streams';
import { EventStreamCodec, type MessageHeaders } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { ProviderError } from '../../canonical/index.js';

/** One decoded AWS event-stream message, with the headers ConverseStream uses. */
export interface EventStreamFrame {
  /** `event`, `exception` (a modelled error such as throttlingException) or `error` (an unmodelled one). */
  messageType: string;
  eventType: string | null;
  exceptionType: string | null;
  /** For `error` messages: `:error-code` and `:error-message`. */
  errorCode: string | null;
  errorMessage: string | null;
  /** The UTF-8 payload (JSON for Bedrock). */
  body: string;
}

// Stateless for encode/decode (only feed() buffers), so one instance serves every stream.
const codec = new EventStreamCodec(toUtf8, fromUtf8);

/** Far above any ConverseStream answer (a maximal completion is a few MiB of frames). */
export const MAX_STREAM_BYTES = 64 * 1024 * 1024;

/**
 * Binary AWS event-stream → frames, with the AWS SDK's own framer (message boundaries from the prelude,
 * whatever the chunking) and codec (prelude and message CRC32 checks, typed headers). A truncated or
 * corrupt frame is a malformed response; errors the source raises (transport) pass through as they are.
 * The framer allocates what a prelude declares, but memory is only committed as bytes arrive, so the
 * cap on bytes read bounds what a broken or hostile upstream can make the gateway hold.
 */
export async function* decodeEventStream(source: AsyncIterable<Uint8Array>, maxBytes = MAX_STREAM_BYTES): AsyncGenerator<EventStreamFrame> {
  const messages = getChunkedStream(bounded(source, maxBytes))[Symbol.asyncIterator]();
  for (;;) {
    let next: IteratorResult<Uint8Array>;
    let frame: EventStreamFrame;
    try {
      next = await messages.next();
      if (next.done) return;
      const message = codec.decode(next.value);
      frame = {
        messageType: header(message.headers, ':message-type') ?? 'event',
        eventType: header(message.headers, ':event-type'),
        exceptionType: header(message.headers, ':exception-type'),
        errorCode: header(message.headers, ':error-code'),
        errorMessage: header(message.headers, ':error-message'),
        body: toUtf8(message.body),
      };
    } catch (error) {
      if (error instanceof ProviderError) throw error;
      throw new ProviderError('malformed_response', 'the provider sent an event-stream frame that is truncated or corrupt');
    }
    yield frame;
  }
}

async function* bounded(source: AsyncIterable<Uint8Array>, maxBytes: number): AsyncGenerator<Uint8Array> {
  let total = 0;
  for await (const chunk of source) {
    total += chunk.byteLength;
    if (total > maxBytes) throw new ProviderError('malformed_response', `the provider stream exceeded ${maxBytes} bytes`);
    yield chunk;
  }
}

/** Encodes an event frame as Bedrock sends it (used by the mock provider and fixtures). */
export function encodeEventFrame(eventType: string, payload: unknown): Uint8Array {
  return codec.encode({
    headers: {
      ':event-type': { type: 'string', value: eventType },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'event' },
    },
    body: fromUtf8(JSON.stringify(payload)),
  });
}

/** Encodes a modelled exception frame (e.g. `throttlingException`) as sent inside a 200 stream. */
export function encodeExceptionFrame(exceptionType: string, message: string): Uint8Array {
  return codec.encode({
    headers: {
      ':exception-type': { type: 'string', value: exceptionType },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'exception' },
    },
    body: fromUtf8(JSON.stringify({ message })),
  });
}

function header(headers: MessageHeaders, name: string): string | null {
  const value = headers[name];
  return value && value.type === 'string' ? value.value : null;
}
