import { GatewayError } from '../../../canonical/index.js';

/**
 * Routing names a parameter a route cannot honour by its Chat Completions name; a Responses client sent
 * it under another one. This is that client's name for each.
 */
const RESPONSES_NAMES: ReadonlyMap<string, string> = new Map([
  ['response_format', 'text.format'],
  ['max_tokens', 'max_output_tokens'],
  ['max_completion_tokens', 'max_output_tokens'],
  ['reasoning_effort', 'reasoning.effort'],
  ['verbosity', 'text.verbosity'],
  ['tools[].function.strict', 'tools[].strict'],
]);

/** A parameter under the name a Responses client sends it with. */
export function responsesParameterName(parameter: string): string {
  return RESPONSES_NAMES.get(parameter) ?? parameter;
}

/** The error as a Responses client should read it: the parameter under the name it was sent with. */
export function inResponsesTerms(error: GatewayError): GatewayError {
  const name = error.param === null ? undefined : RESPONSES_NAMES.get(error.param);
  if (name === undefined) return error;
  const message = error.message.split(`'${error.param}'`).join(`'${name}'`);
  return new GatewayError(error.status, error.code, message, name, error.headers, error.detail);
}
