import type { TokenUsage } from '../../events/index.js';
import type { ToolCall } from './chat-request.js';

export type StopReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

export interface ChatChoice {
  index: number;
  text: string;
  toolCalls: ToolCall[];
  stopReason: StopReason;
}

export interface ChatResponse {
  /** The provider's response id, when it gave one (recorded, not shown to clients). */
  providerRequestId: string | null;
  choices: ChatChoice[];
  usage: TokenUsage | null;
}

/**
 * Incremental output, in order. A `tool_call` event with `id`/`name` opens a call; later ones for the
 * same (choice, index) carry argument text deltas.
 */
export type StreamEvent =
  | { type: 'text'; choice: number; text: string }
  | { type: 'tool_call'; choice: number; index: number; id: string | null; name: string | null; arguments: string }
  | { type: 'finish'; choice: number; stopReason: StopReason }
  | { type: 'usage'; usage: TokenUsage };

export const ZERO_USAGE: TokenUsage = Object.freeze({ input: 0, cachedInput: 0, cacheWrite: 0, output: 0, reasoning: 0 });
