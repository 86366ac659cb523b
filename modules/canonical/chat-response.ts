import type { TokenUsage } from '../../events/index.js';
import type { ReasoningPart, ToolCall } from './chat-request.js';
import type { ReportedPrompt, ReportedUsage } from './reported-usage.js';

export type StopReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

/** One output token's log probability, with the most likely alternatives when they were asked for. */
export interface TokenLogprob {
  token: string;
  logprob: number;
  /** UTF-8 bytes of the token, when the provider gave them. */
  bytes: number[] | null;
  topLogprobs: Array<{ token: string; logprob: number; bytes: number[] | null }>;
}

export interface ChatChoice {
  index: number;
  text: string;
  toolCalls: ToolCall[];
  stopReason: StopReason;
  /**
   * Which of the request's stop sequences ended the answer (stopReason `stop`), when the provider says so
   * (Anthropic `stop_sequence`); absent otherwise. Client formats that can say it pass it on.
   */
  stopSequence?: string;
  /**
   * The model's reasoning, in the order produced (before the text). Anthropic thinking blocks keep their
   * signature; providers that return only a summary or plain text (OpenAI-compatible `reasoning_content`,
   * Gemini thought parts) give one `thinking` part with a null signature. Empty when there was none.
   */
  reasoning: ReasoningPart[];
  /** Output-token log probabilities, when the request asked for them and the provider returned them. */
  logprobs: TokenLogprob[] | null;
}

export interface ChatResponse {
  /** The provider's response id, when it gave one (recorded, not shown to clients). */
  providerRequestId: string | null;
  choices: ChatChoice[];
  /** The provider's usage as it reported it (checked by the pipeline before anything reads it); null when it gave none. */
  usage: ReportedUsage | null;
}

/**
 * Incremental output, in order. A `tool_call` event with `id`/`name` opens a call; later ones for the
 * same (choice, index) carry argument text deltas.
 */
export type StreamEvent =
  | { type: 'text'; choice: number; text: string }
  /**
   * Reasoning text delta. `part` numbers the reasoning blocks of a choice (0, 1, …): a new number starts a
   * new block (Anthropic emits several thinking blocks around tool calls).
   */
  | { type: 'reasoning'; choice: number; part: number; text: string }
  /** The signature that closes thinking block `part` (Anthropic `signature_delta`); clients must echo it back. */
  | { type: 'reasoning_signature'; choice: number; part: number; signature: string }
  /** A redacted thinking block: opaque data to echo back unchanged. */
  | { type: 'reasoning_redacted'; choice: number; part: number; data: string }
  /** Log probabilities of output tokens just streamed. */
  | { type: 'logprobs'; choice: number; content: TokenLogprob[] }
  /** `signature`: the provider's thought signature on the call (see ToolCall), on the event that opens it. */
  | { type: 'tool_call'; choice: number; index: number; id: string | null; name: string | null; arguments: string; signature?: string }
  /** `stopSequence`: as on ChatChoice. */
  | { type: 'finish'; choice: number; stopReason: StopReason; stopSequence?: string }
  /** The provider's usage as it reported it: the pipeline checks it (checkReportedUsage); it never reaches a client encoder. */
  | { type: 'usage'; usage: ReportedUsage }
  /**
   * The provider's count of the prompt, known before any output (Anthropic `message_start`). Not the final
   * usage (which still follows as `usage`): the pipeline checks it, and client formats that report input
   * at the start get it through their encoder's `promptCounted`.
   */
  | { type: 'prompt_usage'; usage: ReportedPrompt };

/** What a client stream encoder is given: the output events, never a provider's unchecked counts. */
export type RelayedStreamEvent = Exclude<StreamEvent, { type: 'usage' | 'prompt_usage' }>;

/** The prompt's counts, once checked. */
export type PromptUsage = Pick<TokenUsage, 'input' | 'cachedInput' | 'cacheWrite'>;

export const ZERO_USAGE: TokenUsage = Object.freeze({ input: 0, cachedInput: 0, cacheWrite: 0, output: 0, reasoning: 0 });
