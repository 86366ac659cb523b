import { createHash } from 'node:crypto';
import type { MockBehaviour } from './mock-behaviour.js';

/** What the mock needs to know of a request, whatever wire format it arrived in. */
export interface MockInput {
  model: string;
  stream: boolean;
  includeUsage: boolean;
  promptText: string;
  tools: Array<{ name: string; parameters: Record<string, unknown> }>;
  /** 'none' disables tools; a name forces that tool. */
  toolChoice: 'auto' | 'none' | 'required' | { name: string };
  /** The conversation ends with a tool result: answer in text. */
  answeringToolResult: boolean;
  responseFormat: { type: 'json_object' } | { type: 'json_schema'; schema: Record<string, unknown> } | null;
  maxTokens: number | null;
  /** The request asked for reasoning (an effort or a thinking budget, however the format spells it). */
  reasoning?: boolean;
  /** Log probabilities asked for, with this many alternatives per token (0: the chosen token only). */
  logprobs?: { top: number } | null;
  /** Prompt-cache breakpoints in the request (Anthropic cache_control, Bedrock cachePoint). */
  cacheBreakpoints?: number;
  /** The request's stop sequences: a text answer ends before the first one that occurs in it. */
  stop?: string[];
  /** The request asked the provider to name the matched stop sequence (Bedrock additionalModelResponseFieldPaths). */
  namesStopSequence?: boolean;
}

/** The answer the mock will give, split into the pieces it streams. */
export interface MockAnswer {
  /** Thinking streamed before the answer, when the request asked for reasoning (else empty). */
  reasoningPieces: string[];
  /** Signs the thinking (formats with signatures): `mockSignature(reasoning text)`. */
  signature: string | null;
  textPieces: string[];
  toolCall: { id: string; name: string; argumentPieces: string[] } | null;
  /**
   * A second call made in parallel (behaviour `parallelToolCalls`, request with two tools or more): the
   * OpenAI dialect interleaves its argument pieces with the first call's, as OpenAI may.
   */
  parallelToolCall?: { id: string; name: string; argumentPieces: string[] };
  finishReason: 'stop' | 'length' | 'tool_calls';
  /** The stop sequence that ended the text (finishReason `stop`), when one of the request's occurred in it. */
  stopSequence?: string;
  /**
   * completion counts every output piece, reasoning included (as OpenAI and Anthropic count output);
   * reasoning is the reasoning pieces; cacheWrite the prompt tokens written to the cache at breakpoints.
   */
  usage: { prompt: number; completion: number; cached: number; reasoning: number; cacheWrite: number };
  /** Per text piece, when asked for: the piece, its log probability and alternatives. */
  logprobs: MockLogprob[] | null;
}

export interface MockLogprob {
  token: string;
  logprob: number;
  top: Array<{ token: string; logprob: number }>;
}

/** The mock's thinking, always the same three pieces (three reasoning tokens by the mock's rule). */
export const MOCK_REASONING = ['Considering', ' the', ' question.'] as const;

/**
 * What the mock signs its thinking with; formats with signatures refuse a continuation whose thinking
 * does not carry it, as Anthropic does, so a gateway that loses the signature fails the test.
 */
export function mockSignature(thinking: string): string {
  return `mocksig-${createHash('sha256').update(thinking).digest('base64url').slice(0, 24)}`;
}

const WORDS = ['Switchyard', 'routes', 'this', 'mock', 'answer', 'through', 'one', 'gateway', 'with', 'exact', 'usage', 'and', 'cost'];

/** Deterministic answers, so tests can compute the expected usage and cost by hand. */
export function planAnswer(input: MockInput, behaviour: MockBehaviour, sequence: number): MockAnswer {
  const prompt = mockTokens(input.promptText) + 3;
  const cached = Math.min(behaviour.cachedTokens, prompt);
  const cacheWrite = (input.cacheBreakpoints ?? 0) > 0 ? prompt - cached : 0;
  const reasoningPieces: string[] = input.reasoning ? [...MOCK_REASONING] : [];
  const thinking = {
    reasoningPieces,
    signature: reasoningPieces.length ? mockSignature(reasoningPieces.join('')) : null,
  };
  const usage = (completion: number) => ({ prompt, completion: completion + reasoningPieces.length, cached, reasoning: reasoningPieces.length, cacheWrite });
  const given = behaviour.text ?? (behaviour.echo ? input.promptText : null);
  const tool = chooseTool(input);
  if (tool) {
    const args = JSON.stringify(sampleFor(tool.parameters, given ?? undefined));
    const pieces = split(args, Math.max(1, behaviour.chunks));
    const answer: MockAnswer = {
      ...thinking,
      textPieces: [],
      toolCall: { id: `call_mock_${sequence}`, name: tool.name, argumentPieces: pieces },
      finishReason: 'tool_calls',
      usage: usage(pieces.length),
      logprobs: null,
    };
    const second = behaviour.parallelToolCalls && typeof input.toolChoice !== 'object' ? input.tools[1] : undefined;
    if (second) {
      const secondPieces = split(JSON.stringify(sampleFor(second.parameters)), Math.max(1, behaviour.chunks));
      answer.parallelToolCall = { id: `call_mock_${sequence}_1`, name: second.name, argumentPieces: secondPieces };
      answer.usage = usage(pieces.length + secondPieces.length);
    }
    return answer;
  }
  let pieces: string[];
  if (input.responseFormat) {
    const json = JSON.stringify(input.responseFormat.type === 'json_schema' ? sampleFor(input.responseFormat.schema) : { answer: 'mock' });
    pieces = split(json, Math.max(1, behaviour.chunks));
  } else if (given !== null) {
    pieces = split(given, Math.max(1, behaviour.chunks));
  } else {
    pieces = Array.from({ length: behaviour.chunks }, (_, i) => (i === 0 ? '' : ' ') + WORDS[i % WORDS.length]);
  }
  let finishReason: MockAnswer['finishReason'] = 'stop';
  const stopped = input.stop?.length ? cutAtStopSequence(pieces, input.stop) : null;
  if (stopped) pieces = stopped.pieces;
  if (input.maxTokens !== null && pieces.length > input.maxTokens) {
    pieces = pieces.slice(0, input.maxTokens);
    finishReason = 'length';
  }
  const answer: MockAnswer = { ...thinking, textPieces: pieces, toolCall: null, finishReason, usage: usage(pieces.length), logprobs: input.logprobs ? logprobsOf(pieces, input.logprobs.top) : null };
  if (stopped && finishReason === 'stop') answer.stopSequence = stopped.sequence;
  return answer;
}

/** The pieces up to the earliest occurrence of any stop sequence (which is not part of the answer, as with real providers). */
function cutAtStopSequence(pieces: string[], stop: string[]): { pieces: string[]; sequence: string } | null {
  const text = pieces.join('');
  let at = -1;
  let sequence = '';
  for (const candidate of stop) {
    const found = candidate.length > 0 ? text.indexOf(candidate) : -1;
    if (found >= 0 && (at < 0 || found < at)) [at, sequence] = [found, candidate];
  }
  if (at < 0) return null;
  const kept: string[] = [];
  let consumed = 0;
  for (const piece of pieces) {
    if (consumed + piece.length > at) {
      if (at > consumed) kept.push(piece.slice(0, at - consumed));
      break;
    }
    kept.push(piece);
    consumed += piece.length;
  }
  return { pieces: kept, sequence };
}

/** Piece i has log probability -(i+1)/10; alternatives are `<piece>~k`, each 1 lower. */
function logprobsOf(pieces: string[], top: number): MockLogprob[] {
  return pieces.map((token, i) => {
    const logprob = -(i + 1) / 10;
    return { token, logprob, top: Array.from({ length: top }, (_, k) => (k === 0 ? { token, logprob } : { token: `${token}~${k}`, logprob: logprob - k })) };
  });
}

function chooseTool(input: MockInput): MockInput['tools'][number] | null {
  if (input.tools.length === 0 || input.toolChoice === 'none' || input.answeringToolResult) return null;
  if (typeof input.toolChoice === 'object') return input.tools.find((t) => t.name === (input.toolChoice as { name: string }).name) ?? null;
  return input.tools[0];
}

/** A value that satisfies a (simple) JSON Schema: what a model filling in tool arguments would give. */
export function sampleFor(schema: Record<string, unknown>, text = 'Paris'): unknown {
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  switch (schema.type) {
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
      const out: Record<string, unknown> = {};
      for (const [name, child] of Object.entries(properties)) out[name] = sampleFor(child, text);
      return out;
    }
    case 'array':
      return [sampleFor((schema.items ?? { type: 'string' }) as Record<string, unknown>, text)];
    case 'integer':
    case 'number':
      return 42;
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return typeof schema.properties === 'object' ? sampleFor({ ...schema, type: 'object' }, text) : text;
  }
}

function split(text: string, parts: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / parts));
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
  return pieces.length ? pieces : [''];
}

/** The mock's own usage rule (four characters per token), so tests can compute expected usage by hand. */
export function mockTokens(text: string): number {
  return text.length === 0 ? 0 : Math.ceil(text.length / 4);
}
