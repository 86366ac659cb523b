import type { TokenUsage } from '../../../events/index.js';
import type { ChatRequest, ChatResponse, GatewayError } from '../../canonical/index.js';
import type { ClientStreamEncoder } from './client-stream-encoder.js';

export interface ResponseIdentity {
  id: string;
  created: number;
  /** The alias the client asked for. */
  model: string;
}

/** One client wire format (OpenAI Chat Completions, Anthropic Messages, OpenAI Responses) over the canonical model. */
export interface ClientFormat {
  readonly name: 'openai' | 'anthropic' | 'responses';
  parseChat(body: unknown): ChatRequest;
  responseId(requestId: string): string;
  /** `request` is the one `parseChat` returned (formats that echo request settings read it). */
  encodeChat(response: ChatResponse, identity: ResponseIdentity, usage: TokenUsage, request: ChatRequest): unknown;
  /** `estimatedInputTokens`: the admission estimate, for formats that report input before the provider's count is known. */
  streamEncoder(identity: ResponseIdentity, request: ChatRequest, estimatedInputTokens?: number): ClientStreamEncoder;
  errorBody(error: GatewayError): unknown;
  /** How this format spells a parameter named in OpenAI's terms (errors name what the client sent); identity when absent. */
  parameterName?(parameter: string): string;
}
