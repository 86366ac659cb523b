import { ATTEMPT_TOKEN_CEILING, type TokenUsage, isTokenCount } from '../../events/index.js';

/**
 * Token counts exactly as a provider reported them, in canonical meaning but not yet trusted. A provider's
 * usage is a claim that reaches money, limits, metrics and events; nothing downstream may read it until
 * `checkReportedUsage` (the one boundary every provider format passes) has made it a TokenUsage.
 *
 * Each canonical count is the sum of the provider fields that make it up (Anthropic's input is
 * `input_tokens + cache_read_input_tokens + cache_creation_input_tokens`; Gemini's output is
 * `candidatesTokenCount + thoughtsTokenCount`), kept apart so that a bad field is named as the provider
 * named it, and so that no sum is taken of values that are not counts.
 */
export interface ReportedUsage {
  input: ReportedCount;
  cachedInput: ReportedCount;
  cacheWrite: ReportedCount;
  output: ReportedCount;
  reasoning: ReportedCount;
}

/** The prompt's part of a usage, when a provider reports it before the output (Anthropic's message_start). */
export type ReportedPrompt = Pick<ReportedUsage, 'input' | 'cachedInput' | 'cacheWrite'>;

/** One provider field, as it arrived: anything JSON can carry, or undefined when it was absent. */
export interface ReportedField {
  /** The provider's name of the field (`prompt_tokens`, `usageMetadata.thoughtsTokenCount`). */
  readonly name: string;
  readonly value: unknown;
  /** An absent required field makes the usage implausible; an absent optional one counts 0. */
  readonly required: boolean;
}

export type ReportedCount = readonly ReportedField[];

export const reportedField = (name: string, value: unknown, required = false): ReportedField => ({ name, value, required });

/** A usage with nothing reported in it: every count an absent optional field (0). */
export const NOTHING_REPORTED: ReportedCount = Object.freeze([]);

/**
 * The most a provider may plausibly claim for one attempt, derived from the request (see usage-bound.ts
 * in the inference pipeline): `input` bounds input, cached and cache-write tokens, `output` bounds
 * output and reasoning tokens.
 */
export interface UsageBound {
  input: number;
  output: number;
}

/** Every bound is capped by events' ATTEMPT_TOKEN_CEILING: a deployment declared with an absurd context window does not lift it. */
export { ATTEMPT_TOKEN_CEILING };

/** What the gateway counted itself, billed in place of a count it could not believe. */
export interface CountedUsage {
  input: number;
  output: number;
}

/** Why a provider's usage was not believed: the fields as reported (bounded strings) and the first reason. */
export interface ImplausibleUsage {
  reason: string;
  /** Provider field name → the value as reported, written as a string of at most REPORTED_VALUE_CHARS characters. */
  reported: Record<string, string>;
}

export interface CheckedUsage {
  usage: TokenUsage;
  /** Null when every count was believed. */
  implausible: ImplausibleUsage | null;
}

const REPORTED_VALUE_CHARS = 32;
const MAX_REPORTED_FIELDS = 12;

/**
 * The boundary where provider numbers enter. Every count must be a non-negative integer within its
 * bound, and the parts must agree (cached and cache-write tokens are part of the input, reasoning part
 * of the output). A count that is not is replaced, never thrown on and never passed on:
 * - input → the gateway's count (the admission estimate, or the provider's own prompt count from the
 *   start of a stream when that one was plausible);
 * - output → the gateway's count of what it relayed;
 * - cached input, cache write, reasoning → 0 (priced as plain input or output: the dearer reading);
 * and the whole usage is reported implausible, with the raw values kept as bounded strings.
 */
export function checkReportedUsage(reported: ReportedUsage, bound: UsageBound, counted: CountedUsage): CheckedUsage {
  const problems: Problems = { reason: null, fields: null };
  const inputMax = Math.min(bound.input, ATTEMPT_TOKEN_CEILING);
  const outputMax = Math.min(bound.output, ATTEMPT_TOKEN_CEILING);
  let input = sum(reported.input, inputMax, problems);
  let cachedInput = sum(reported.cachedInput, inputMax, problems);
  let cacheWrite = sum(reported.cacheWrite, inputMax, problems);
  let output = sum(reported.output, outputMax, problems);
  let reasoning = sum(reported.reasoning, outputMax, problems);
  if (input === null) input = Math.min(Math.max(0, Math.floor(counted.input)), inputMax);
  if (output === null) output = Math.min(Math.max(0, Math.floor(counted.output)), outputMax);
  if (cachedInput !== null && cacheWrite !== null && cachedInput + cacheWrite > input) {
    disagree(problems, 'cached and cache-write tokens exceed the input tokens', [reported.input, reported.cachedInput, reported.cacheWrite]);
    cachedInput = null;
    cacheWrite = null;
  }
  if (reasoning !== null && reasoning > output) {
    disagree(problems, 'reasoning tokens exceed the output tokens', [reported.output, reported.reasoning]);
    reasoning = null;
  }
  cachedInput = Math.min(cachedInput ?? 0, input);
  cacheWrite = Math.min(cacheWrite ?? 0, input - cachedInput);
  reasoning = Math.min(reasoning ?? 0, output);
  const usage: TokenUsage = { input, cachedInput, cacheWrite, output, reasoning };
  return { usage, implausible: problems.reason === null ? null : { reason: problems.reason, reported: problems.fields ?? {} } };
}

/** The prompt counts reported before any output, or null when one is not believable (the caller keeps its estimate). */
export function checkReportedPrompt(reported: ReportedPrompt, bound: UsageBound): Pick<TokenUsage, 'input' | 'cachedInput' | 'cacheWrite'> | null {
  const problems: Problems = { reason: null, fields: null };
  const inputMax = Math.min(bound.input, ATTEMPT_TOKEN_CEILING);
  const input = sum(reported.input, inputMax, problems);
  const cachedInput = sum(reported.cachedInput, inputMax, problems);
  const cacheWrite = sum(reported.cacheWrite, inputMax, problems);
  if (input === null || cachedInput === null || cacheWrite === null || cachedInput + cacheWrite > input) return null;
  return { input, cachedInput, cacheWrite };
}

/** One count a provider reported on its own (an embeddings prompt count, a token count), or null when it is not believable. */
export function checkReportedCount(value: unknown, max: number): number | null {
  return isCount(value) && value <= Math.min(max, ATTEMPT_TOKEN_CEILING) ? value : null;
}

/** A usage that reports nothing but what the gateway counted (for tests and the mock's own answers). */
export function reportedUsageOf(usage: TokenUsage): ReportedUsage {
  return {
    input: [reportedField('input', usage.input, true)],
    cachedInput: [reportedField('cachedInput', usage.cachedInput)],
    cacheWrite: [reportedField('cacheWrite', usage.cacheWrite)],
    output: [reportedField('output', usage.output, true)],
    reasoning: [reportedField('reasoning', usage.reasoning)],
  };
}

/** Raw values written as short strings: never content-sized, whatever a provider put in a count. */
export function reportedValue(value: unknown): string {
  let text: string;
  if (value === undefined) text = 'absent';
  else if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean' || value === null) text = String(value);
  else if (typeof value === 'string') text = JSON.stringify(value.length > REPORTED_VALUE_CHARS ? value.slice(0, REPORTED_VALUE_CHARS) : value);
  else text = Array.isArray(value) ? 'array' : typeof value;
  return text.length > REPORTED_VALUE_CHARS ? `${text.slice(0, REPORTED_VALUE_CHARS - 1)}…` : text;
}

interface Problems {
  reason: string | null;
  fields: Record<string, string> | null;
}

function isCount(value: unknown): value is number {
  return isTokenCount(value, Number.MAX_SAFE_INTEGER);
}

/** The count's parts added up, or null (with the problem noted) when one part is not a count or the sum is above `max`. */
function sum(parts: ReportedCount, max: number, problems: Problems): number | null {
  let total = 0;
  for (const part of parts) {
    const value = part.value;
    if (value === undefined || value === null) {
      if (part.required) return note(problems, `${part.name} is missing`, parts);
      continue;
    }
    if (!isCount(value)) return note(problems, `${part.name} is not a non-negative integer`, parts);
    total += value;
  }
  if (total > max) return note(problems, `${parts.map((p) => p.name).join(' + ')} is above the plausible ${max}`, parts);
  return total;
}

function note(problems: Problems, reason: string, parts: ReportedCount): null {
  disagree(problems, reason, [parts]);
  return null;
}

function disagree(problems: Problems, reason: string, counts: readonly ReportedCount[]): void {
  problems.reason ??= reason;
  const fields = (problems.fields ??= {});
  for (const parts of counts) {
    for (const part of parts) {
      if (Object.keys(fields).length >= MAX_REPORTED_FIELDS) return;
      fields[part.name] = reportedValue(part.value);
    }
  }
}
