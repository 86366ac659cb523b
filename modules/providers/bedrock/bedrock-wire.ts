/** The Amazon Bedrock Converse wire format (the subset Switchyard speaks), shared by the adapter and the mock. */

export type ConverseImageFormat = 'png' | 'jpeg' | 'gif' | 'webp';

export interface ConverseToolUse {
  toolUseId: string;
  name: string;
  input: unknown;
}

export interface ConverseToolResult {
  toolUseId: string;
  content: Array<{ text: string } | { json: unknown }>;
  status?: 'success' | 'error';
}

/** Claude's thinking on Bedrock: signed text, or opaque redacted bytes (base64 in JSON). */
export interface ConverseReasoningContent {
  reasoningText?: { text: string; signature?: string };
  redactedContent?: string;
}

/** A prompt-cache breakpoint: everything before it may be cached. */
export interface ConverseCachePoint {
  type: 'default';
}

/** One content block: exactly one member is set. */
export interface ConverseContentBlock {
  text?: string;
  /** Bytes are base64 in the JSON protocol. */
  image?: { format: ConverseImageFormat; source: { bytes: string } };
  /** `format` pdf, txt, csv, html, md, doc, docx, xls, xlsx; `name` of Bedrock's allowed characters. */
  document?: { format: string; name: string; source: { bytes: string } };
  toolUse?: ConverseToolUse;
  toolResult?: ConverseToolResult;
  reasoningContent?: ConverseReasoningContent;
  cachePoint?: ConverseCachePoint;
}

export interface ConverseMessage {
  role: 'user' | 'assistant';
  content: ConverseContentBlock[];
}

export type ConverseToolSpec =
  | { toolSpec: { name: string; description?: string; inputSchema: { json: Record<string, unknown> } } }
  | { cachePoint: ConverseCachePoint };

export type ConverseToolChoice = { auto: Record<string, never> } | { any: Record<string, never> } | { tool: { name: string } };

export interface ConverseRequest {
  messages: ConverseMessage[];
  system?: Array<{ text: string } | { cachePoint: ConverseCachePoint }>;
  inferenceConfig?: { maxTokens?: number; temperature?: number; topP?: number; stopSequences?: string[] };
  toolConfig?: { tools: ConverseToolSpec[]; toolChoice?: ConverseToolChoice };
  /** Free-form key/value pairs recorded with the invocation (Bedrock invocation logs). */
  requestMetadata?: Record<string, string>;
  /** Model-specific fields (Claude: top_k, thinking). */
  additionalModelRequestFields?: Record<string, unknown>;
  /** JSON pointers of model-specific response fields to return (Claude: `/stop_sequence`, the sequence that matched). */
  additionalModelResponseFieldPaths?: string[];
}

export type ConverseStopReason =
  | 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence' | 'guardrail_intervened' | 'content_filtered'
  | 'model_context_window_exceeded' | 'malformed_model_output' | 'malformed_tool_use';

/** `inputTokens` excludes the cache reads and writes, which are reported beside it. */
export interface ConverseUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  cacheReadInputTokens?: number;
  cacheWriteInputTokens?: number;
}

export interface ConverseResponse {
  output: { message: ConverseMessage };
  stopReason: ConverseStopReason | string;
  usage?: ConverseUsage;
  metrics?: { latencyMs: number };
  /** The fields asked for by additionalModelResponseFieldPaths. */
  additionalModelResponseFields?: unknown;
}

/** ConverseStream event payloads, by the `:event-type` header of their frame. */
export interface ConverseStreamPayloads {
  messageStart: { role: 'assistant' };
  contentBlockStart: { contentBlockIndex: number; start: { toolUse?: { toolUseId: string; name: string } } };
  contentBlockDelta: {
    contentBlockIndex: number;
    delta: { text?: string; toolUse?: { input: string }; reasoningContent?: { text?: string; signature?: string; redactedContent?: string } };
  };
  contentBlockStop: { contentBlockIndex: number };
  messageStop: { stopReason: ConverseStopReason | string; additionalModelResponseFields?: unknown };
  metadata: { usage?: ConverseUsage; metrics?: { latencyMs: number } };
}

export type ConverseStreamEventType = keyof ConverseStreamPayloads;

/** The media type of a ConverseStream body (binary AWS event-stream framing). */
export const EVENT_STREAM_CONTENT_TYPE = 'application/vnd.amazon.eventstream';

/** Amazon Titan text embeddings (InvokeModel body and answer). */
export interface TitanEmbeddingRequest {
  inputText: string;
  dimensions?: number;
}

export interface TitanEmbeddingResponse {
  embedding: number[];
  inputTextTokenCount: number;
}
