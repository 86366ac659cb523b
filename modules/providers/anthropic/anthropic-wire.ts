/** The Anthropic Messages wire format (the subset Switchyard speaks), shared by client and provider sides. */

export type AnthropicImageSource =
  | { type: 'base64'; media_type: string; data: string }
  | { type: 'url'; url: string };

export type AnthropicDocumentSource =
  | { type: 'base64'; media_type: 'application/pdf'; data: string }
  | { type: 'text'; media_type: 'text/plain'; data: string }
  | { type: 'url'; url: string }
  | { type: 'content'; content: string | Array<{ type: 'text'; text: string }> };

export interface AnthropicCacheControl {
  type: 'ephemeral';
  ttl?: '5m' | '1h';
}

type Cached = { cache_control?: AnthropicCacheControl };

export type AnthropicContentBlock =
  | ({ type: 'text'; text: string } & Cached)
  | ({ type: 'image'; source: AnthropicImageSource } & Cached)
  | ({ type: 'document'; source: AnthropicDocumentSource; title?: string; context?: string } & Cached)
  | ({ type: 'tool_use'; id: string; name: string; input: unknown } & Cached)
  | ({ type: 'tool_result'; tool_use_id: string; content: string | AnthropicContentBlock[]; is_error?: boolean } & Cached)
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string };

export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: AnthropicContentBlock[];
}

export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
  cache_control?: AnthropicCacheControl;
  eager_input_streaming?: boolean;
  /** Strict tool use: the input is sampled to match input_schema (current models). */
  strict?: boolean;
}

export type AnthropicToolChoice =
  | { type: 'auto' | 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' };

export interface AnthropicRequest {
  model: string;
  max_tokens: number;
  messages: AnthropicMessage[];
  /** A string, or text blocks when some carry cache_control. */
  system?: string | Array<{ type: 'text'; text: string; cache_control?: AnthropicCacheControl }>;
  temperature?: number;
  top_p?: number;
  top_k?: number;
  thinking?: { type: 'enabled'; budget_tokens: number };
  service_tier?: string;
  stop_sequences?: string[];
  tools?: AnthropicTool[];
  tool_choice?: AnthropicToolChoice;
  metadata?: { user_id: string };
  /** Structured outputs (JSON outputs): the answer's text is JSON matching the schema (current models). */
  output_config?: { format: { type: 'json_schema'; schema: Record<string, unknown> } };
  stream?: boolean;
}

export interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

export type AnthropicStopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal' | 'model_context_window_exceeded';

export interface AnthropicResponseMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: Array<{ type: string; text?: string; id?: string; name?: string; input?: unknown; thinking?: string; signature?: string; data?: string }>;
  stop_reason: AnthropicStopReason | null;
  stop_sequence: string | null;
  usage?: AnthropicUsage;
}

/** `{type: "error", error: {type, message}}`: error answers and `event: error` frames alike. */
export interface AnthropicErrorBody {
  type: 'error';
  error: { type: string; message: string };
}
