import type { ChatMessage, ChatRequest, ToolCall } from './chat-request.js';

/**
 * How a provider's opaque thought signature on a tool call (Gemini's `thoughtSignature`) travels through
 * client formats that have no field for it: appended to the tool-call id the client sees
 * (`call_0__thought__<signature>`, the encoding LiteLLM uses), so every client that echoes ids back —
 * OpenAI `tool_calls[].id` and `tool_call_id`, Anthropic `tool_use.id` and `tool_use_id`, Responses
 * `call_id` — returns it on the next turn without knowing it exists. Parsing splits it off again, so
 * the canonical model (and every other provider) sees the plain id and the signature apart.
 */
export const THOUGHT_SIGNATURE_MARKER = '__thought__';

/** The id a client sees for a tool call: the canonical id, with the signature appended when there is one. */
export function clientToolCallId(id: string, signature: string | undefined | null): string {
  return signature ? `${id}${THOUGHT_SIGNATURE_MARKER}${signature}` : id;
}

/** A client's tool-call id → the canonical id and the signature it carried (null when none). */
export function splitClientToolCallId(clientId: string): { id: string; signature: string | null } {
  const at = clientId.indexOf(THOUGHT_SIGNATURE_MARKER);
  // A marker at the very start, or with nothing after it, is part of an ordinary id, not an encoding.
  if (at <= 0 || at + THOUGHT_SIGNATURE_MARKER.length === clientId.length) return { id: clientId, signature: null };
  return { id: clientId.slice(0, at), signature: clientId.slice(at + THOUGHT_SIGNATURE_MARKER.length) };
}

/**
 * A parsed request with the signatures of earlier tool calls split off their ids (assistant tool calls
 * get `signature`, tool results the plain id they answer). Every client format applies it after parsing.
 */
export function withThoughtSignatures(request: ChatRequest): ChatRequest {
  if (!request.messages.some(carriesSignature)) return request;
  // eslint-disable-next-line no-restricted-syntax -- overrides a key it has: the shape is shared
  return { ...request, messages: request.messages.map(splitMessage) };
}

function carriesSignature(message: ChatMessage): boolean {
  if (message.role === 'assistant') return message.toolCalls.some((call) => splitClientToolCallId(call.id).signature !== null);
  return message.role === 'tool' && splitClientToolCallId(message.toolCallId).signature !== null;
}

function splitMessage(message: ChatMessage): ChatMessage {
  // eslint-disable-next-line no-restricted-syntax -- overrides a key it has: the shape is shared
  if (message.role === 'assistant') return { ...message, toolCalls: message.toolCalls.map(splitCall) };
  // eslint-disable-next-line no-restricted-syntax -- overrides a key it has: the shape is shared
  if (message.role === 'tool') return { ...message, toolCallId: splitClientToolCallId(message.toolCallId).id };
  return message;
}

function splitCall(call: ToolCall): ToolCall {
  const { id, signature } = splitClientToolCallId(call.id);
  // The call's keys are the parser's own (never a client's), so Object.assign copies them as a spread would.
  return signature === null ? call : Object.assign({}, call, { id, signature });
}
