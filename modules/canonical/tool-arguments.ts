import { RequestScoped } from '../../src/kernel/index.js';
import type { ToolCall } from './chat-request.js';

const parsed = new RequestScoped<ToolCall, Record<string, unknown> | null>('switchyard.toolArguments');

/**
 * A tool call's arguments as the JSON object providers that store them as objects (Anthropic, Gemini,
 * Bedrock) need: empty arguments are `{}`, anything but a JSON object is null. Parsed once per request —
 * the planner asks every candidate whether it can honour the history, and the chosen adapter then builds
 * its body from the same object (which is therefore never mutated).
 */
export function toolArgumentsObject(call: ToolCall): Record<string, unknown> | null {
  const cached = parsed.get(call);
  if (cached !== undefined) return cached;
  const value = parse(call.arguments);
  parsed.set(call, value);
  return value;
}

function parse(text: string): Record<string, unknown> | null {
  if (text.trim().length === 0) return {};
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The key a client receives a tool call's arguments under when they were not a JSON object (see toolInputForClient). */
export const RAW_TOOL_ARGUMENTS_KEY = '_raw';

/**
 * A tool call's arguments for a client format whose tool input must be a JSON object (Anthropic's
 * `tool_use.input`), whatever the model produced: the JSON object itself, `{}` for no arguments, and
 * anything else — text that is not JSON, cut-off JSON, an array, a string or a number — wrapped as
 * `{"_raw": "<the text as produced>"}`. Never a string where an object is required, and never a lost
 * argument: the text is passed on whole for the client (or its tool) to refuse or repair.
 */
export function toolInputForClient(argumentsText: string): Record<string, unknown> {
  return parse(argumentsText) ?? { [RAW_TOOL_ARGUMENTS_KEY]: argumentsText };
}
