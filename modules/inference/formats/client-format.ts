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
  streamEncoder(identity: ResponseIdentity, request: ChatRequest): ClientStreamEncoder;
  errorBody(error: GatewayError): unknown;
}
