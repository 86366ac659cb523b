import type { TokenUsage } from '../../../events/index.js';
import type { GatewayError, PromptUsage, RelayedStreamEvent } from '../../canonical/index.js';

/** Renders canonical stream events in one client format (OpenAI chunks, Anthropic message events). */
export interface ClientStreamEncoder {
  readonly contentType: string;
  /** Frames for one event ('' when the event produces none yet). */
  encode(event: RelayedStreamEvent): string;
  /**
   * The provider's prompt count, checked, when it reported one before any output (Anthropic's
   * message_start); formats that report input at the start use it instead of the admission estimate.
   */
  promptCounted?(usage: PromptUsage): void;
  /** What the provider of the attempt that reaches the client guarantees about tool arguments (UpstreamStream.toolArguments). */
  upstreamToolArguments?(kind: 'object' | 'text'): void;
  /** Closing frames after the terminal events are committed (usage if asked for, then the end marker). */
  finish(usage: TokenUsage): string;
  /** A failure after output started: an error frame; the stream then closes without its end marker. */
  error(error: GatewayError): string;
}
