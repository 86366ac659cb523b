import type { ChatRequest } from '../../../canonical/index.js';
import { RequestScoped } from '../../../../src/kernel/index.js';

/**
 * What a Responses object reports back about its request that the canonical model does not carry in
 * the client's own shape (the instructions as sent, `text.format`, the tool definitions, `tool_choice`).
 * It is kept beside the canonical request rather than in it, so other client formats never see it.
 */
export interface ResponsesEcho {
  instructions: string | null;
  textFormat: Record<string, unknown>;
  tools: Array<Record<string, unknown>>;
  toolChoice: string | Record<string, unknown>;
  safetyIdentifier: string | null;
}

const echoes = new RequestScoped<ChatRequest, ResponsesEcho>('switchyard.responsesEcho');

export function rememberEcho(request: ChatRequest, echo: ResponsesEcho): void {
  echoes.set(request, echo);
}

/** The echo of a request parsed from a Responses body; a request from elsewhere echoes its canonical fields. */
export function echoOf(request: ChatRequest): ResponsesEcho {
  return echoes.get(request) ?? { instructions: null, textFormat: { type: 'text' }, tools: [], toolChoice: 'auto', safetyIdentifier: null };
}
