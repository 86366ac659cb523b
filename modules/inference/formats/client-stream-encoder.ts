import type { TokenUsage } from '../../../events/index.js';
import type { GatewayError, StreamEvent } from '../../canonical/index.js';

/** Renders canonical stream events in one client format (OpenAI chunks, Anthropic message events). */
export interface ClientStreamEncoder {
  readonly contentType: string;
  /** Frames for one event ('' when the event produces none yet). */
  encode(event: StreamEvent): string;
  /** Closing frames after the terminal events are committed (usage if asked for, then the end marker). */
  finish(usage: TokenUsage): string;
  /** A failure after output started: an error frame; the stream then closes without its end marker. */
  error(error: GatewayError): string;
}
