/**
 * The gateway's provider-neutral representation of a chat request. Client formats (OpenAI, Anthropic)
 * parse into it; provider adapters build their wire requests from it.
 */
export type ContentPart =
  | { type: 'text'; text: string }
  | { type: 'image'; url: string; detail: 'auto' | 'low' | 'high' | null; mediaType: string | null };

export interface ToolCall {
  id: string;
  name: string;
  /** JSON text exactly as the model produced it. */
  arguments: string;
}

export type ChatMessage =
  | { role: 'system'; content: ContentPart[] }
  | { role: 'user'; content: ContentPart[]; name?: string }
  | { role: 'assistant'; content: ContentPart[]; toolCalls: ToolCall[] }
  | { role: 'tool'; toolCallId: string; content: ContentPart[]; isError?: boolean };

export interface ToolDefinition {
  name: string;
  description: string | null;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
  strict: boolean | null;
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
  user: string | null;
  metadata: Record<string, string> | null;
  n: number;
}

/** What a request needs from a deployment, derived once so routing can filter on it. */
export function requiredCapabilities(request: ChatRequest): string[] {
  const needs = new Set<string>(['chat']);
  if (request.stream) needs.add('streaming');
  if (request.tools.length > 0) needs.add('tools');
  if (request.responseFormat?.type === 'json_schema') needs.add('json_schema');
  if (request.n > 1) needs.add('n');
  if (request.messages.some((m) => m.content.some((p) => p.type === 'image'))) needs.add('vision');
  return [...needs];
}
