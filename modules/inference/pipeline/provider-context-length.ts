import type { ContextLengthNumbers } from '../../canonical/index.js';

/** OpenAI: "maximum context length is M tokens. However, you requested T tokens (N in the messages, Y in the completion)". */
const OPENAI_REQUESTED = /maximum context length is (\d+) tokens\. However, you requested \d+ tokens \((\d+) in the messages, (\d+) in the completion\)/;
/** OpenAI, prompt only: "maximum context length is M tokens. However, your messages resulted in N tokens". */
const OPENAI_MESSAGES = /maximum context length is (\d+) tokens\. However, your messages resulted in (\d+) tokens/;
/** Anthropic, prompt and max_tokens: "input length and `max_tokens` exceed context limit: N + Y > M". */
const ANTHROPIC_WITH_OUTPUT = /exceed context limit: (\d+) \+ (\d+) > (\d+)/;
/** Anthropic, prompt only: "prompt is too long: N tokens > M maximum". */
const ANTHROPIC_PROMPT = /prompt is too long: (\d+) tokens > (\d+) maximum/;
/**
 * Gemini: "The input token count (N) exceeds the maximum number of tokens allowed (M)". The provider's
 * text arrives redacted, and the redactor takes "token count" for a credential ("token [redacted]"),
 * so the word after "token" is left open.
 */
const GEMINI_INPUT = /input token \S+ \((\d+)\) exceeds the maximum number of tokens allowed \((\d+)\)/;

/**
 * The numbers in a provider's own context-length refusal (OpenAI's and Anthropic's wordings, which
 * OpenAI-compatible servers and Bedrock's Claude repeat, and Gemini's), so the caller reads them in its own format;
 * null when the provider said none. Runs only on a refusal, never on the request path.
 */
export function contextLengthFromProvider(message: string | null): ContextLengthNumbers | null {
  if (!message) return null;
  let m = OPENAI_REQUESTED.exec(message);
  if (m) return numbers(m[2], m[3], m[1]);
  m = OPENAI_MESSAGES.exec(message);
  if (m) return numbers(m[2], null, m[1]);
  m = ANTHROPIC_WITH_OUTPUT.exec(message);
  if (m) return numbers(m[1], m[2], m[3]);
  m = ANTHROPIC_PROMPT.exec(message);
  if (m) return numbers(m[1], null, m[2]);
  m = GEMINI_INPUT.exec(message);
  if (m) return numbers(m[1], null, m[2]);
  return null;
}

function numbers(input: string, output: string | null, window: string): ContextLengthNumbers {
  return { inputTokens: Number(input), outputTokens: output === null ? null : Number(output), contextWindow: Number(window), route: null, estimated: false };
}
