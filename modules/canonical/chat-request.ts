/**
 * The gateway's provider-neutral representation of a chat request. Client formats (OpenAI, Anthropic)
 * parse into it; provider adapters build their wire requests from it.
 */

/**
 * A prompt-cache breakpoint (Anthropic's `cache_control`): the prefix up to and including the part that
 * carries it may be cached by the provider. Only providers with explicit breakpoints (Anthropic,
 * Bedrock) can honour it; the parameter tables say what every other provider format does with it.
 */
export interface CacheControl {
  type: 'ephemeral';
  /** Cache lifetime the client asked for; null is the provider's default (five minutes). */
  ttl: '5m' | '1h' | null;
}

export type ContentPart =
  | { type: 'text'; text: string; cacheControl?: CacheControl }
  | { type: 'image'; url: string; detail: 'auto' | 'low' | 'high' | null; mediaType: string | null; cacheControl?: CacheControl }
  | DocumentPart;

/**
 * Where a document's content is (see document.ts for what each provider format can take):
 * - `base64`: the file's bytes (validated base64, no whitespace) with its media type (application/pdf, text/plain, …);
 * - `text`: plain text the client sent as text (Anthropic's text source);
 * - `url`: a public http(s) URL the provider fetches (Anthropic's url source, the Responses API's file_url);
 * - `content`: Anthropic's custom content source, text blocks the client already split;
 * - `file_id`: a file the client uploaded to OpenAI's Files API: provider state only an `openai` route can read.
 */
export type DocumentSource =
  | { type: 'base64'; mediaType: string; data: string }
  | { type: 'text'; text: string }
  | { type: 'url'; url: string }
  | { type: 'content'; texts: string[] }
  | { type: 'file_id'; fileId: string };

/**
 * A document the user gives the model (Anthropic `document` blocks, OpenAI `file` parts, Responses
 * `input_file`). `title` and `context` are Anthropic's (context is extra text about the document the model
 * reads beside it); `filename` is OpenAI's. `at` is where the client put it, in its own format's path
 * style, so a size refusal names the field the client sent.
 */
export interface DocumentPart {
  type: 'document';
  source: DocumentSource;
  title: string | null;
  context: string | null;
  filename: string | null;
  at: string;
  cacheControl?: CacheControl;
}

export interface ToolCall {
  id: string;
  name: string;
  /** JSON text exactly as the model produced it. */
  arguments: string;
  cacheControl?: CacheControl;
  /**
   * The provider's opaque thought signature on this call (Gemini's `thoughtSignature`): sent back with the
   * call on the next turn to the same provider format, never to another (it is provider state, not a
   * parameter). Client formats carry it in the tool-call id (see thought-signature.ts).
   */
  signature?: string;
}

/**
 * Reasoning the model produced in an earlier assistant turn, sent back so multi-turn tool use keeps
 * working. Anthropic (and Bedrock's Claude models) verify `signature` and refuse a tool-use continuation
 * whose thinking is missing or altered, so it is carried byte for byte; `redacted_thinking` is opaque data.
 */
export type ReasoningPart =
  | { type: 'thinking'; text: string; signature: string | null }
  | { type: 'redacted_thinking'; data: string };

export type ChatMessage =
  | { role: 'system'; content: ContentPart[] }
  | { role: 'user'; content: ContentPart[]; name?: string }
  /** `reasoning` comes before the content and tool calls, as the model produced it. */
  | { role: 'assistant'; content: ContentPart[]; toolCalls: ToolCall[]; reasoning?: ReasoningPart[] }
  | { role: 'tool'; toolCallId: string; content: ContentPart[]; isError?: boolean; cacheControl?: CacheControl };

export interface ToolDefinition {
  name: string;
  description: string | null;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
  strict: boolean | null;
  cacheControl?: CacheControl;
  /** Anthropic's fine-grained tool streaming (`eager_input_streaming`): a streaming hint, never a change of the answer. */
  eagerInputStreaming?: boolean;
}

/**
 * How much the model should think before answering. OpenAI-style clients name an effort; Anthropic-style
 * clients name a token budget (`thinking.budget_tokens`). Each provider format translates whichever was
 * given into its own knob (OpenAI `reasoning_effort`, Anthropic/Bedrock `thinking.budget_tokens`, Gemini
 * `thinkingConfig.thinkingBudget`) using the table in modules/providers/parameters/reasoning-budget.ts.
 * `effort: null, budgetTokens: null` never occurs: no reasoning request is `reasoning: null`.
 */
export interface ReasoningRequest {
  effort: ReasoningEffort | null;
  budgetTokens: number | null;
}

export type ReasoningEffort = 'minimal' | 'low' | 'medium' | 'high';

/** OpenAI's Predicted Outputs: text most of the answer is expected to repeat. */
export interface Prediction {
  type: 'content';
  content: string;
}

export type ToolChoice = { type: 'auto' } | { type: 'none' } | { type: 'required' } | { type: 'tool'; name: string };

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict: boolean | null; description: string | null };

export interface ChatRequest {
  /** The public alias the client asked for. */
  model: string;
  messages: ChatMessage[];
  maxOutputTokens: number | null;
  temperature: number | null;
  topP: number | null;
  stop: string[];
  stream: boolean;
  /** The client asked for a usage frame at the end of the stream. */
  includeUsage: boolean;
  tools: ToolDefinition[];
  toolChoice: ToolChoice | null;
  parallelToolCalls: boolean | null;
  responseFormat: ResponseFormat | null;
  seed: number | null;
  /** End-user id for the provider's abuse monitoring (OpenAI `user`, Anthropic `metadata.user_id`). Attribution only, never logged with content. */
  user: string | null;
  metadata: Record<string, string> | null;
  n: number;
  /** Requested reasoning (see ReasoningRequest); null asks for the model's default. */
  reasoning: ReasoningRequest | null;
  /** OpenAI sampling penalties, -2..2; null (or 0) asks for nothing. */
  frequencyPenalty: number | null;
  presencePenalty: number | null;
  /** Token id (as a decimal string) → bias -100..100, in the OpenAI tokenizer's ids. */
  logitBias: Record<string, number> | null;
  /** Return log probabilities of the output tokens (and `topLogprobs` alternatives, 0..20, per token). */
  logprobs: boolean;
  topLogprobs: number | null;
  /** Sample from the k most likely tokens only (Anthropic, Gemini, Bedrock `additionalModelRequestFields`). */
  topK: number | null;
  /** OpenAI's answer length hint for GPT-5-class models. */
  verbosity: 'low' | 'medium' | 'high' | null;
  /**
   * Processing tier exactly as the client named it (OpenAI: auto, default, flex, priority, scale; Anthropic:
   * auto, standard_only). null and the clients' defaults (`auto`, `default`) ask for nothing.
   */
  serviceTier: string | null;
  /** OpenAI's stable hashed end-user id for safety monitoring (attribution, never content). */
  safetyIdentifier: string | null;
  /** OpenAI's prompt-cache routing key: requests sharing it land on the same cache. */
  promptCacheKey: string | null;
  /** OpenAI's prompt-cache lifetime (`in_memory`, the default, or `24h`); null asks for the default. */
  promptCacheRetention: string | null;
  /** OpenAI `store`: keep the completion on the provider for distillation/evals; null or false asks for nothing. */
  store: boolean | null;
  /** Output modalities (OpenAI `modalities`); null is text only. */
  modalities: string[] | null;
  prediction: Prediction | null;
  /**
   * Anthropic beta features the caller named in its `anthropic-beta` header (already validated), in its
   * order; absent when it named none. Only Anthropic routes can honour them: other routes are ineligible.
   */
  anthropicBetas?: readonly string[];
}

/** What a request needs from a deployment, derived once so routing can filter on it. */
export function requiredCapabilities(request: ChatRequest): string[] {
  const needs = new Set<string>(['chat']);
  if (request.stream) needs.add('streaming');
  if (request.tools.length > 0) needs.add('tools');
  if (request.responseFormat?.type === 'json_schema') needs.add('json_schema');
  if (request.n > 1) needs.add('n');
  if (request.messages.some((m) => m.content.some((p) => p.type === 'image'))) needs.add('vision');
  // Reading documents (PDFs above all) is a property of the model: the deployment must declare it.
  if (request.messages.some((m) => m.content.some((p) => p.type === 'document'))) needs.add('documents');
  // Reasoning is a property of the model, not of the wire format: the deployment must declare it.
  if (request.reasoning !== null) needs.add('reasoning');
  if (request.modalities?.includes('audio')) needs.add('audio');
  return [...needs];
}

/**
 * The parameters added for issue 11 at their "ask for nothing" values: what a client format that has no
 * way to express one of them sets, so every constructor of a ChatRequest states all of them.
 */
export const UNSET_PARAMETERS: Readonly<Pick<ChatRequest,
  'reasoning' | 'frequencyPenalty' | 'presencePenalty' | 'logitBias' | 'logprobs' | 'topLogprobs' | 'topK' | 'verbosity'
  | 'serviceTier' | 'safetyIdentifier' | 'promptCacheKey' | 'promptCacheRetention' | 'store' | 'modalities' | 'prediction'>> = Object.freeze({
  reasoning: null,
  frequencyPenalty: null,
  presencePenalty: null,
  logitBias: null,
  logprobs: false,
  topLogprobs: null,
  topK: null,
  verbosity: null,
  serviceTier: null,
  safetyIdentifier: null,
  promptCacheKey: null,
  promptCacheRetention: null,
  store: null,
  modalities: null,
  prediction: null,
});
