import type { ChatRequest, EmbeddingsRequest } from '../../canonical/index.js';
import type { ResolvedDeployment } from '../../../projections/routing-snapshot/index.js';

/** Room on every bound for what is not the answer itself: ids, JSON structure, headers of the format. */
const MARGIN_BYTES = 4 * 1024 * 1024;
/** Generously what one output token takes in a provider's JSON: text escaped as \uXXXX is six bytes a character. */
const BYTES_PER_OUTPUT_TOKEN = 32;
/** One log probability entry (token, logprob, bytes) per output token and per alternative asked for. */
const BYTES_PER_LOGPROB = 96;
/** One float of a vector as JSON text (`-0.0123456789012345,`). */
const BYTES_PER_VECTOR_FLOAT = 24;
/** Vector length assumed when the request names none (the largest common embedding models are 3,072–4,096). */
const DEFAULT_DIMENSIONS = 4096;
/** A token count's answer is a few bytes of JSON. */
export const TOKEN_COUNT_ANSWER_BYTES = 64 * 1024;

/**
 * The most bytes a buffered chat answer on `deployment` may have: what the largest legitimate answer
 * for the request could take — every choice at the larger of the requested cap and the deployment's
 * maximum output (twice, for reasoning shown beside the answer), with its log probabilities when they
 * were asked for — plus a margin. A provider that sends more is refused (answer_too_large) before the
 * gateway holds it all. `override` (SWITCHYARD_MAX_ANSWER_BYTES) replaces the computed bound.
 */
export function chatAnswerBytes(request: ChatRequest, deployment: ResolvedDeployment, override: number | null): number {
  if (override !== null) return override;
  const perChoice = 2 * Math.max(request.maxOutputTokens ?? 0, deployment.maxOutputTokens, request.reasoning?.budgetTokens ?? 0);
  const perToken = BYTES_PER_OUTPUT_TOKEN + (request.logprobs ? BYTES_PER_LOGPROB * (1 + (request.topLogprobs ?? 0)) : 0);
  return MARGIN_BYTES + Math.max(1, request.n) * perChoice * perToken;
}

/** The most bytes a buffered embeddings answer may have: every vector at its dimensions as JSON floats, plus a margin. */
export function embeddingsAnswerBytes(request: EmbeddingsRequest, override: number | null): number {
  if (override !== null) return override;
  return MARGIN_BYTES + request.inputs.length * (request.dimensions ?? DEFAULT_DIMENSIONS) * BYTES_PER_VECTOR_FLOAT;
}
