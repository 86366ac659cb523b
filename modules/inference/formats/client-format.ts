import type { TokenUsage } from '../../../events/index.js';
import type { ChatRequest, ChatResponse, GatewayError } from '../../canonical/index.js';
import type { ClientStreamEncoder } from './client-stream-encoder.js';

export interface ResponseIdentity {
  id: string;
  created: number;
  /** The alias the client asked for. */
  model: string;
}

/** One client wire format (OpenAI Chat Completions, Anthropic Messages) over the canonical model. */
export interface ClientFormat {
  readonly name: 'openai' | 'anthropic';
  parseChat(body: unknown): ChatRequest;
  responseId(requestId: string): string;
  encodeChat(response: ChatResponse, identity: ResponseIdentity, usage: TokenUsage): unknown;
  streamEncoder(identity: ResponseIdentity, request: ChatRequest): ClientStreamEncoder;
  errorBody(error: GatewayError): unknown;
}
