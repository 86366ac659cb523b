import type { Dispatcher } from 'undici';
import type { ChatRequest, ChatResponse, EmbeddingsRequest, EmbeddingsResponse, ModerationRequest, ModerationResponse, StreamEvent } from '../canonical/index.js';
import type { ResolvedDeployment } from '../../projections/routing-snapshot/index.js';

/** Everything an adapter needs for one upstream call. */
export interface UpstreamCall {
  request: ChatRequest;
  deployment: ResolvedDeployment;
  /** The deployment's connection pool and the URL (origin + path prefix) it reaches. */
  dispatcher: Dispatcher;
  baseUrl: URL;
  signal: AbortSignal;
  /** Most time to the response headers (buffered: the whole answer). */
  headersTimeoutMs: number;
  /** Most time between two body chunks. */
  idleTimeoutMs: number;
  /** W3C trace context (`traceparent`, `tracestate`) of the attempt, sent with the provider call. */
  traceHeaders?: Record<string, string>;
  /**
   * The most bytes a buffered answer may have (readJsonBody refuses more as `answer_too_large`, having
   * held no more than this). Streams are bounded per event and by their lifetime instead.
   */
  maxAnswerBytes: number;
}

/** One upstream embeddings call: the same connection and deadline inputs as a chat call. */
export interface EmbeddingsCall extends Omit<UpstreamCall, 'request'> {
  request: EmbeddingsRequest;
}

/** One upstream moderation call (a content policy's moderation check): the same connection and deadline inputs as a chat call. */
export interface ModerationCall extends Omit<UpstreamCall, 'request'> {
  request: ModerationRequest;
}

export interface UpstreamStream {
  providerRequestId: string | null;
  events: AsyncIterable<StreamEvent>;
  /**
   * What the provider guarantees about streamed tool-call arguments: `object` — the pieces of a call
   * assemble to a JSON object, one call after another (Anthropic, Bedrock, Gemini); absent — whatever
   * the model produced, possibly interleaved (OpenAI Chat Completions), which client formats that need an
   * object must check before they pass it on.
   */
  toolArguments?: 'object';
}

/**
 * One provider wire format. Adapters translate canonical requests to the provider's format and its
 * answers (buffered and streamed) back, and classify every failure as a typed ProviderError.
 */
export interface ProviderAdapter {
  /** Names a request parameter this provider cannot honour, or null when it can honour them all. */
  unsupportedParameter(request: ChatRequest, deployment: ResolvedDeployment): string | null;
  /** The requested parameters this provider accepts but has no wire field for (see unsentParameters in parameter-table.ts). */
  unsentParameters(request: ChatRequest, deployment: ResolvedDeployment): readonly string[];
  chat(call: UpstreamCall): Promise<ChatResponse>;
  /** Resolves once the upstream accepted the request; events then arrive as the provider produces them. */
  chatStream(call: UpstreamCall): Promise<UpstreamStream>;
  /** Embeddings, for adapters whose provider serves them (routes need the `embeddings` capability too). */
  embed?(call: EmbeddingsCall): Promise<EmbeddingsResponse>;
  /** Moderation (OpenAI `/moderations`), for adapters whose provider serves it (routes need the `moderation` capability too). */
  moderate?(call: ModerationCall): Promise<ModerationResponse>;
  /**
   * The request's input tokens as the provider counted them, for adapters whose provider has a count
   * endpoint: the value as reported, which the pipeline checks (checkReportedCount) before anyone sees it.
   */
  countTokens?(call: UpstreamCall): Promise<unknown>;
}
