import { type ChatRequest, type ChatResponse, ProviderError } from '../../canonical/index.js';
import type { ResolvedDeployment } from '../../../projections/routing-snapshot/index.js';
import type { ProviderAdapter, UpstreamCall, UpstreamStream } from '../provider-adapter.js';
import { anthropicHttpError } from './anthropic-errors.js';
import { DEFAULT_MAX_TOKENS_CAP, toAnthropicRequest, unsupportedByAnthropic } from './anthropic-request.js';
import { preparedBody } from '../prepared-body.js';
import { fromAnthropicMessage } from './anthropic-response.js';
import { AnthropicStreamTranslator } from './anthropic-stream.js';
import { translateSseBody } from '../streaming/sse-translation.js';
import { postUpstream, readJsonBody } from '../upstream-post.js';
import { unsentParameters } from '../parameters/parameter-table.js';
import { withUnsentThinking } from '../parameters/thinking-continuation.js';
import { ANTHROPIC_PARAMETERS } from './anthropic-parameters.js';

/** The API version Switchyard's translation is written against; a provider's `apiVersion` overrides it. */
export const DEFAULT_ANTHROPIC_VERSION = '2023-06-01';

/**
 * Anthropic's Messages API: `POST {baseUrl}/v1/messages` with `x-api-key` and `anthropic-version`,
 * buffered JSON or an SSE stream of typed message events.
 */
export class AnthropicAdapter implements ProviderAdapter {
  unsupportedParameter(request: ChatRequest, deployment: ResolvedDeployment): string | null {
    return unsupportedByAnthropic(request, deployment);
  }

  unsentParameters(request: ChatRequest, deployment: ResolvedDeployment): readonly string[] {
    return withUnsentThinking(unsentParameters(ANTHROPIC_PARAMETERS, request, deployment), request);
  }

  async chat(call: UpstreamCall): Promise<ChatResponse> {
    return fromAnthropicMessage(await readJsonBody(await this.send(call, false), call.signal, call.maxAnswerBytes));
  }

  async chatStream(call: UpstreamCall): Promise<UpstreamStream> {
    const body = await this.send(call, true);
    const translator = new AnthropicStreamTranslator();
    return {
      get providerRequestId() {
        return translator.providerRequestId;
      },
      events: translateSseBody(body, translator, call.signal),
      // Anthropic streams a call's input as pieces of one JSON object (with eager_input_streaming, which the
      // client asked for, partial JSON by Anthropic's own rule).
      toolArguments: 'object',
    };
  }

  /**
   * `POST {baseUrl}/v1/messages/count_tokens`: the same translation as a message, less what the count
   * endpoint does not take (it counts the prompt: model, system, messages, tools, tool_choice).
   */
  async countTokens(call: UpstreamCall): Promise<unknown> {
    const { deployment } = call;
    const full = toAnthropicRequest(call.request, { model: deployment.model, defaultMaxTokens: 1, stream: false });
    const payload = {
      model: full.model,
      messages: full.messages,
      ...(full.system !== undefined ? { system: full.system } : {}),
      ...(full.tools !== undefined ? { tools: full.tools } : {}),
      ...(full.tool_choice !== undefined ? { tool_choice: full.tool_choice } : {}),
    };
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json',
      'anthropic-version': deployment.provider.apiVersion ?? DEFAULT_ANTHROPIC_VERSION,
      ...betaHeader(call.request),
      ...credentialHeaders(deployment),
    };
    const response = await postUpstream(call, `${messagesPath(call.baseUrl.pathname)}/count_tokens`, headers, JSON.stringify(payload), anthropicHttpError);
    const answer = (await readJsonBody(response.body, call.signal, call.maxAnswerBytes)) as { input_tokens?: unknown } | null;
    if (answer?.input_tokens === undefined) throw new ProviderError('malformed_response', 'the provider answered count_tokens without input_tokens');
    return answer.input_tokens;
  }

  private async send(call: UpstreamCall, stream: boolean) {
    const { deployment } = call;
    const body = preparedBody(call.request, deployment, stream ? 'stream' : 'buffered', () => toAnthropicRequest(call.request, {
      model: deployment.model,
      defaultMaxTokens: Math.min(deployment.maxOutputTokens, DEFAULT_MAX_TOKENS_CAP),
      maxOutputTokens: deployment.maxOutputTokens,
      stream,
    }));
    const headers = {
      'content-type': 'application/json',
      accept: stream ? 'text/event-stream' : 'application/json',
      'anthropic-version': deployment.provider.apiVersion ?? DEFAULT_ANTHROPIC_VERSION,
      ...betaHeader(call.request),
      ...credentialHeaders(deployment),
    };
    return (await postUpstream(call, messagesPath(call.baseUrl.pathname), headers, body, anthropicHttpError)).body;
  }
}

/** The caller's betas (validated to token characters when the request was read), comma-separated as Anthropic reads them. */
function betaHeader(request: ChatRequest): Record<string, string> {
  return request.anthropicBetas ? { 'anthropic-beta': request.anthropicBetas.join(',') } : {};
}

function credentialHeaders(deployment: ResolvedDeployment): Record<string, string> {
  const credential = deployment.provider.credential;
  return credential ? { 'x-api-key': credential.reveal() } : {};
}

/** `https://api.anthropic.com` and `https://api.anthropic.com/v1` both reach `/v1/messages`. */
export function messagesPath(basePath: string): string {
  const prefix = basePath.replace(/\/+$/, '');
  return /\/v1$/.test(prefix) ? `${prefix}/messages` : `${prefix}/v1/messages`;
}
