import { type ChatMessage, type ChatRequest, type ContentPart, type DocumentPart, ProviderError, type ReasoningPart, toolArgumentsObject, type ToolChoice } from '../../canonical/index.js';
import type { ResolvedDeployment } from '../../../projections/routing-snapshot/index.js';
import { BEDROCK_DOCUMENT_FORMATS, BEDROCK_DOCUMENTS, unsupportedDocument } from '../parameters/document-support.js';
import { continuesToolUseWithoutThinking } from '../parameters/thinking-continuation.js';
import { refusedParameter } from '../parameters/parameter-table.js';
import { anthropicBudget } from '../parameters/reasoning-budget.js';
import { BEDROCK_PARAMETERS } from './bedrock-parameters.js';
import type {
  ConverseCachePoint, ConverseContentBlock, ConverseImageFormat, ConverseMessage, ConverseRequest, ConverseToolChoice, ConverseToolSpec,
} from './bedrock-wire.js';

const IMAGE_FORMATS: Record<string, ConverseImageFormat> = {
  'image/png': 'png', 'image/jpeg': 'jpeg', 'image/jpg': 'jpeg', 'image/gif': 'gif', 'image/webp': 'webp',
};
const DATA_URL = /^data:(image\/[a-z0-9.+-]+);base64,([A-Za-z0-9+/=\s]*)$/i;
/** requestMetadata limits: at most 16 pairs, keys of this alphabet up to 256, values up to 256 characters. */
const METADATA_KEY = /^[a-zA-Z0-9\s:_@$#=/+,.-]{1,256}$/;
const MAX_METADATA = 16;
const CACHE_POINT: ConverseCachePoint = Object.freeze({ type: 'default' });
/** Room for the answer on top of a thinking budget when the client set no max_tokens. */
const DEFAULT_THINKING_ANSWER_TOKENS = 4096;

/**
 * Names the first parameter Converse cannot honour, or null. Converse has no JSON mode, seed, `n`,
 * tool_choice "none" once tools were used, or participant names, and takes images
 * only as bytes: an http(s) image URL would need the gateway to fetch it, which it never does (SSRF).
 */
export function converseUnsupportedParameter(request: ChatRequest, deployment: ResolvedDeployment): string | null {
  const refused = refusedParameter(BEDROCK_PARAMETERS, request, deployment) ?? unsupportedDocument(request, BEDROCK_DOCUMENTS);
  if (refused) return refused;
  if (request.toolChoice?.type === 'none' && request.messages.some((m) => m.role === 'tool' || (m.role === 'assistant' && m.toolCalls.length > 0))) {
    return 'tool_choice';
  }
  for (const [i, message] of request.messages.entries()) {
    if (message.role === 'user' && message.name) return `messages[${i}].name`;
    for (const [j, part] of message.content.entries()) {
      if (part.type !== 'image') continue;
      const param = `messages[${i}].content[${j}].image_url`;
      const data = DATA_URL.exec(part.url);
      if (!data || !IMAGE_FORMATS[data[1].toLowerCase()]) return `${param}.url`;
      if (part.detail === 'low' || part.detail === 'high') return `${param}.detail`;
    }
    if (message.role === 'assistant') {
      for (const [j, call] of message.toolCalls.entries()) {
        if (toolArgumentsObject(call) === null) return `messages[${i}].tool_calls[${j}].function.arguments`;
      }
    }
  }
  return metadataProblem(request);
}

/** Canonical request → Converse / ConverseStream JSON body (the model is named in the path). */
export function toConverseRequest(request: ChatRequest, deploymentMaxOutputTokens = DEFAULT_THINKING_ANSWER_TOKENS): ConverseRequest {
  const body: ConverseRequest = { messages: toConverseMessages(request.messages) };
  const system = request.messages
    .filter((m): m is Extract<ChatMessage, { role: 'system' }> => m.role === 'system')
    .flatMap((m) => {
      const text = joinText(m.content);
      const blocks: ConverseRequest['system'] & object = text.length > 0 ? [{ text }] : [];
      if (m.content.some((p) => p.cacheControl)) blocks.push({ cachePoint: CACHE_POINT });
      return blocks;
    });
  if (system.length) body.system = system;

  const inference: NonNullable<ConverseRequest['inferenceConfig']> = {};
  if (request.maxOutputTokens !== null) inference.maxTokens = request.maxOutputTokens;
  if (request.temperature !== null) inference.temperature = request.temperature;
  if (request.topP !== null) inference.topP = request.topP;
  if (request.stop.length) {
    inference.stopSequences = request.stop;
    // Converse says only `stop_sequence`; Claude names the one that matched when asked for it.
    body.additionalModelResponseFieldPaths = ['/stop_sequence'];
  }

  // Claude's own fields: Converse forwards additionalModelRequestFields to the model unchanged.
  const additional: Record<string, unknown> = {};
  if (request.topK !== null) additional.top_k = request.topK;
  // Claude on Bedrock reads its betas from the body (a list), not from an anthropic-beta header.
  if (request.anthropicBetas) additional.anthropic_beta = [...request.anthropicBetas];
  // A continuation of a tool-use turn whose signed thinking the client did not send back goes without thinking (see thinking-continuation.ts).
  if (request.reasoning !== null && !continuesToolUseWithoutThinking(request.messages)) {
    const ceiling = request.maxOutputTokens ?? deploymentMaxOutputTokens;
    const budget = anthropicBudget(request.reasoning, ceiling);
    if (budget === null) throw new ProviderError('invalid_request', 'max_tokens leaves no room for a thinking budget of at least 1024 tokens.', 400);
    additional.thinking = { type: 'enabled', budget_tokens: budget };
    if (request.maxOutputTokens === null) inference.maxTokens = Math.min(deploymentMaxOutputTokens, budget + DEFAULT_THINKING_ANSWER_TOKENS);
  }
  if (Object.keys(additional).length) body.additionalModelRequestFields = additional;
  if (Object.keys(inference).length) body.inferenceConfig = inference;

  // tool_choice "none" with no tool history: leaving the tools out is exactly "the model may not call one".
  if (request.tools.length && request.toolChoice?.type !== 'none') {
    body.toolConfig = {
      tools: request.tools.flatMap((tool): ConverseToolSpec[] => [
        {
          toolSpec: {
            name: tool.name,
            ...(tool.description !== null ? { description: tool.description } : {}),
            inputSchema: { json: tool.parameters },
          },
        },
        ...(tool.cacheControl ? [{ cachePoint: CACHE_POINT }] : []),
      ]),
    };
    const choice = toConverseToolChoice(request.toolChoice);
    if (choice) body.toolConfig.toolChoice = choice;
  }
  const metadata = requestMetadata(request);
  if (Object.keys(metadata).length) body.requestMetadata = metadata;
  return body;
}

/**
 * System messages go to `system`; tool results become user `toolResult` blocks; consecutive messages of
 * one role are merged, because Converse wants user and assistant turns to alternate (parallel tool
 * results arrive as several OpenAI `tool` messages but belong in one user turn).
 */
function toConverseMessages(messages: ChatMessage[]): ConverseMessage[] {
  const out: ConverseMessage[] = [];
  const names = new DocumentNames();
  for (const message of messages) {
    if (message.role === 'system') continue;
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const blocks = toBlocks(message, names);
    const last = out[out.length - 1];
    if (last && last.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  }
  return out;
}

function toBlocks(message: Exclude<ChatMessage, { role: 'system' }>, names: DocumentNames): ConverseContentBlock[] {
  switch (message.role) {
    case 'user':
      return message.content.flatMap((part) => toContentBlock(part, names));
    case 'assistant':
      return [
        // Signed thinking first and unchanged: Claude verifies it when a tool-use turn continues.
        ...(message.reasoning ?? []).flatMap(toReasoningBlock),
        ...message.content.flatMap((part) => toContentBlock(part, names)),
        ...message.toolCalls.flatMap((call): ConverseContentBlock[] => [
          { toolUse: { toolUseId: call.id, name: call.name, input: toolArgumentsObject(call) ?? {} } },
          ...(call.cacheControl ? [{ cachePoint: CACHE_POINT }] : []),
        ]),
      ];
    case 'tool':
      return [
        {
          toolResult: {
            toolUseId: message.toolCallId,
            content: [{ text: joinText(message.content) }],
            ...(message.isError ? { status: 'error' as const } : {}),
          },
        },
        ...(message.cacheControl ? [{ cachePoint: CACHE_POINT }] : []),
      ];
  }
}

/** Unsigned thinking cannot be verified and is left out (see the Anthropic adapter). */
function toReasoningBlock(part: ReasoningPart): ConverseContentBlock[] {
  if (part.type === 'redacted_thinking') return [{ reasoningContent: { redactedContent: part.data } }];
  return part.signature !== null ? [{ reasoningContent: { reasoningText: { text: part.text, signature: part.signature } } }] : [];
}

/** Anthropic's cache_control marks the block it sits on; Converse puts a cachePoint block after it. */
function toContentBlock(part: ContentPart, names: DocumentNames): ConverseContentBlock[] {
  const blocks = part.type === 'document' ? [documentBlock(part, names)] : toPlainContentBlock(part);
  return part.cacheControl && blocks.length ? [...blocks, { cachePoint: CACHE_POINT }] : blocks;
}

function toPlainContentBlock(part: Exclude<ContentPart, DocumentPart>): ConverseContentBlock[] {
  if (part.type === 'text') return part.text.length > 0 ? [{ text: part.text }] : []; // Converse rejects blank text blocks
  const data = DATA_URL.exec(part.url)!; // checked by converseUnsupportedParameter
  return [{ image: { format: IMAGE_FORMATS[data[1].toLowerCase()], source: { bytes: data[2].replace(/\s+/g, '') } } }];
}

/** A document as bytes in its Converse format; a text source as txt. The documents table checked the kind. */
function documentBlock(part: DocumentPart, names: DocumentNames): ConverseContentBlock {
  const source = part.source;
  const name = names.next(part.title ?? part.filename);
  if (source.type === 'base64') return { document: { format: BEDROCK_DOCUMENT_FORMATS[source.mediaType], name, source: { bytes: source.data } } };
  if (source.type === 'text') return { document: { format: 'txt', name, source: { bytes: Buffer.from(source.text, 'utf8').toString('base64') } } };
  throw new ProviderError('invalid_request', `Bedrock Converse cannot take a ${source.type} document.`, 400);
}

/**
 * Converse wants a name on every document, of letters, digits, single spaces, hyphens, parentheses and
 * square brackets, and no two alike in a request: the title or filename with anything else made a hyphen
 * (`report.pdf` → `report-pdf`), else `document N`; a repeated name gets ` (N)`.
 */
class DocumentNames {
  private readonly used = new Set<string>();

  next(label: string | null): string {
    const cleaned = (label ?? '').replace(/[^A-Za-z0-9\s\-()[\]]/g, '-').replace(/\s+/g, ' ').trim().slice(0, 200);
    const base = cleaned.length > 0 ? cleaned : `document ${this.used.size + 1}`;
    let name = base;
    for (let n = 2; this.used.has(name); n++) name = `${base} (${n})`;
    this.used.add(name);
    return name;
  }
}

function toConverseToolChoice(choice: ToolChoice | null): ConverseToolChoice | null {
  switch (choice?.type) {
    case 'auto':
      return { auto: {} };
    case 'required':
      return { any: {} };
    case 'tool':
      return { tool: { name: choice.name } };
    default:
      return null;
  }
}


/** OpenAI `metadata` and `user` (the end-user id) → Converse `requestMetadata`, kept with the invocation. */
function requestMetadata(request: ChatRequest): Record<string, string> {
  return {
    ...(request.metadata ?? {}),
    ...(request.user !== null ? { user: request.user } : {}),
    ...(request.safetyIdentifier !== null ? { safety_identifier: request.safetyIdentifier } : {}),
  };
}

function metadataProblem(request: ChatRequest): string | null {
  const metadata = request.metadata ?? {};
  if (request.user !== null && (request.user.length > 256 || metadata.user !== undefined)) return 'user';
  const entries = Object.entries(requestMetadata(request));
  if (entries.length > MAX_METADATA) return request.user !== null && Object.keys(metadata).length === MAX_METADATA ? 'user' : 'metadata';
  if (Object.entries(metadata).some(([key, value]) => !METADATA_KEY.test(key) || value.length > 256)) return 'metadata';
  return null;
}

function joinText(parts: ContentPart[]): string {
  return parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
}
