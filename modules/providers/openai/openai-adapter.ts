import type { ChatRequest } from '../../canonical/chat-request.js';
import type { ChatResponse, StreamEvent } from '../../canonical/chat-response.js';
import { ProviderError } from '../../canonical/provider-error.js';
import type { ResolvedDeployment } from '../../../projections/routing-snapshot/routing-snapshot.js';
import type { EmbeddingsResponse } from '../../canonical/embeddings.js';
import type { EmbeddingsCall, ProviderAdapter, UpstreamCall, UpstreamStream } from '../provider-adapter.js';
import { SseDecoder } from '../streaming/sse-decoder.js';
import { classifyHttpStatus, httpError, readBounded, transportError } from '../upstream-errors.js';
import { fromOpenAiEmbeddings, toOpenAiEmbeddingsRequest } from './openai-embeddings.js';
import { toOpenAiRequest } from './openai-request.js';
import { fromOpenAiCompletion } from './openai-response.js';
import { OpenAiStreamTranslator } from './openai-stream.js';
import type { OpenAiErrorBody } from './openai-wire.js';

export interface OpenAiDialect {
  /** Request path below the base URL. */
  path(deployment: ResolvedDeployment): string;
  headers(deployment: ResolvedDeployment): Record<string, string>;
  maxTokensField: 'max_completion_tokens' | 'max_tokens';
  /** Whether the body names the model (Azure names the deployment in the path instead). */
  modelInBody: boolean;
}

/** OpenAI and OpenAI-compatible servers (vLLM, Ollama, TGI, the mock): the Chat Completions wire format. */
export class OpenAiAdapter implements ProviderAdapter {
  constructor(private readonly dialect: OpenAiDialect) {}

  unsupportedParameter(request: ChatRequest, deployment: ResolvedDeployment): string | null {
    if (request.n > 1 && !deployment.capabilities.has('n')) return 'n';
    return null;
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
    return fromOpenAiCompletion(json);
  }

  async chatStream(call: UpstreamCall): Promise<UpstreamStream> {
    const body = await this.send(call, true);
    const translator = new OpenAiStreamTranslator();
    const events = async function* (): AsyncGenerator<StreamEvent> {
      const decoder = new SseDecoder();
      try {
        // After [DONE] keep reading to the end of the body so the connection returns to the pool.
        for await (const chunk of body) {
          if (translator.done) continue;
          for (const frame of decoder.push(chunk as Uint8Array)) if (!translator.done) yield* translator.translate(frame);
        }
        if (!translator.done) for (const frame of decoder.end()) yield* translator.translate(frame);
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

  /** `POST …/embeddings` beside the dialect's chat path (so Azure keeps its deployment path and api-version). */
  async embed(call: EmbeddingsCall): Promise<EmbeddingsResponse> {
    const { deployment } = call;
    const path = this.dialect.path(deployment).replace(/\/chat\/completions(?=\?|$)/, '/embeddings');
    let response;
    try {
      response = await call.dispatcher.request({
        origin: call.baseUrl.origin,
        path: joinPath(call.baseUrl.pathname, path),
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...this.dialect.headers(deployment) },
        body: JSON.stringify(toOpenAiEmbeddingsRequest(call.request, this.dialect.modelInBody ? deployment.model : null)),
        signal: call.signal,
        headersTimeout: call.headersTimeoutMs,
        bodyTimeout: call.idleTimeoutMs,
      });
    } catch (error) {
      throw transportError(error, call.signal);
    }
    if (response.statusCode < 200 || response.statusCode >= 300) {
      const text = await readBounded(response.body).catch(() => '');
      throw errorFromBody(response.statusCode, response.headers, text);
    }
    let json: unknown;
    try {
      json = await response.body.json();
    } catch (error) {
      if (call.signal.aborted) throw transportError(error, call.signal);
      throw new ProviderError('malformed_response', 'the provider returned a body that is not JSON');
    }
    const requestId = response.headers['x-request-id'];
    return { ...fromOpenAiEmbeddings(json, call.request.inputs.length), providerRequestId: (Array.isArray(requestId) ? requestId[0] : requestId) ?? null };
  }

  private async send(call: UpstreamCall, stream: boolean) {
    const { deployment } = call;
    const payload = toOpenAiRequest(call.request, {
      model: this.dialect.modelInBody ? deployment.model : null,
      maxTokensField: this.dialect.maxTokensField,
      stream,
    });
    let response;
    try {
      response = await call.dispatcher.request({
        origin: call.baseUrl.origin,
        path: joinPath(call.baseUrl.pathname, this.dialect.path(deployment)),
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: stream ? 'text/event-stream' : 'application/json',
          ...this.dialect.headers(deployment),
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
    throw errorFromBody(response.statusCode, response.headers, text);
  }
}

function errorFromBody(status: number, headers: Record<string, string | string[] | undefined>, text: string): ProviderError {
  let detail: string | null = null;
  let code = '';
  try {
    const parsed = JSON.parse(text) as Partial<OpenAiErrorBody>;
    detail = parsed.error?.message ?? null;
    code = `${parsed.error?.code ?? ''} ${parsed.error?.type ?? ''}`;
  } catch {
    detail = null; // a non-JSON error body (an HTML error page) is not passed on
  }
  let errorClass = classifyHttpStatus(status);
  if (/context_length|context length|maximum context/i.test(`${code} ${detail ?? ''}`)) errorClass = 'context_length';
  else if (/content_filter|content_policy/i.test(code)) errorClass = 'content_policy';
  return httpError(status, headers, errorClass, detail);
}

function joinPath(prefix: string, path: string): string {
  return `${prefix.replace(/\/+$/, '')}${path}`;
}
