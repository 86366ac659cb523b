import type { ChatRequest } from '../../canonical/chat-request.js';
import type { ChatResponse, StreamEvent } from '../../canonical/chat-response.js';
import { ProviderError } from '../../canonical/provider-error.js';
import type { ResolvedDeployment } from '../../../projections/routing-snapshot/routing-snapshot.js';
import type { ProviderAdapter, UpstreamCall, UpstreamStream } from '../provider-adapter.js';
import { SseDecoder } from '../streaming/sse-decoder.js';
import { readBounded, transportError } from '../upstream-errors.js';
import { anthropicHttpError } from './anthropic-errors.js';
import { DEFAULT_MAX_TOKENS_CAP, toAnthropicRequest, unsupportedByAnthropic } from './anthropic-request.js';
import { fromAnthropicMessage } from './anthropic-response.js';
import { AnthropicStreamTranslator } from './anthropic-stream.js';

/** The API version Switchyard's translation is written against; a provider's `apiVersion` overrides it. */
export const DEFAULT_ANTHROPIC_VERSION = '2023-06-01';

/**
 * Anthropic's Messages API: `POST {baseUrl}/v1/messages` with `x-api-key` and `anthropic-version`,
 * buffered JSON or an SSE stream of typed message events.
 */
export class AnthropicAdapter implements ProviderAdapter {
  unsupportedParameter(request: ChatRequest): string | null {
    return unsupportedByAnthropic(request);
  }

  async chat(call: UpstreamCall): Promise<ChatResponse> {
    const body = await this.send(call, false);
    let json: unknown;
    try {
      json = await body.json();
    } catch (error) {
      if (call.signal.aborted) throw transportError(error, call.signal);
      throw new ProviderError('malformed_response', 'the provider returned a body that is not JSON');
    }
    return fromAnthropicMessage(json);
  }

  async chatStream(call: UpstreamCall): Promise<UpstreamStream> {
    const body = await this.send(call, true);
    const translator = new AnthropicStreamTranslator();
    const events = async function* (): AsyncGenerator<StreamEvent> {
      const decoder = new SseDecoder();
      try {
        // After message_stop keep reading to the end of the body so the connection returns to the pool.
        for await (const chunk of body) {
          if (translator.done) continue;
          for (const frame of decoder.push(chunk as Uint8Array)) if (!translator.done) yield* translator.translate(frame);
        }
        if (!translator.done) for (const frame of decoder.end()) yield* translator.translate(frame);
        translator.end();
      } catch (error) {
        throw error instanceof ProviderError ? error : transportError(error, call.signal);
      } finally {
        if (!translator.done) body.destroy();
      }
    };
    return {
      get providerRequestId() {
        return translator.providerRequestId;
      },
      events: events(),
    };
  }

  private async send(call: UpstreamCall, stream: boolean) {
    const { deployment } = call;
    const payload = toAnthropicRequest(call.request, {
      model: deployment.model,
      defaultMaxTokens: Math.min(deployment.maxOutputTokens, DEFAULT_MAX_TOKENS_CAP),
      stream,
    });
    let response;
    try {
      response = await call.dispatcher.request({
        origin: call.baseUrl.origin,
        path: messagesPath(call.baseUrl.pathname),
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: stream ? 'text/event-stream' : 'application/json',
          'anthropic-version': deployment.provider.apiVersion ?? DEFAULT_ANTHROPIC_VERSION,
          ...credentialHeaders(deployment),
        },
        body: JSON.stringify(payload),
        signal: call.signal,
        headersTimeout: call.headersTimeoutMs,
        bodyTimeout: call.idleTimeoutMs,
      });
    } catch (error) {
      throw transportError(error, call.signal);
    }
    if (response.statusCode >= 200 && response.statusCode < 300) return response.body;
    const text = await readBounded(response.body).catch(() => '');
    throw anthropicHttpError(response.statusCode, response.headers, text);
  }
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
