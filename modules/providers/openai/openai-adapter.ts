import { type ChatRequest, type ChatResponse, type EmbeddingsResponse, type ModerationResponse, type ProviderError, firstHeader } from '../../canonical/index.js';
import type { ResolvedDeployment } from '../../../projections/routing-snapshot/index.js';
import type { EmbeddingsCall, ModerationCall, ProviderAdapter, UpstreamCall, UpstreamStream } from '../provider-adapter.js';
import { translateSseBody } from '../streaming/sse-translation.js';
import { DEFAULT_REQUEST_ID_HEADERS, classifyHttpStatus, httpError } from '../upstream-errors.js';
import { joinPath, postUpstream, readJsonBody } from '../upstream-post.js';
import { fromOpenAiEmbeddings, toOpenAiEmbeddingsRequest } from './openai-embeddings.js';
import { fromOpenAiModeration, toOpenAiModerationRequest } from './openai-moderation.js';
import { type DocumentSupport, unsupportedDocument } from '../parameters/document-support.js';
import { refusedParameter, type ParameterTable, unsentParameters } from '../parameters/parameter-table.js';
import { toOpenAiRequest } from './openai-request.js';
import { preparedBody } from '../prepared-body.js';
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
  /** Response headers that carry the provider's request id, in order of preference. */
  requestIdHeaders?: readonly string[];
  /** What this flavour of the wire format does with each parameter. */
  parameters: ParameterTable;
  /** Which documents it takes (file parts; file ids only on OpenAI itself). */
  documents: DocumentSupport;
}

/** OpenAI and OpenAI-compatible servers (vLLM, Ollama, TGI, the mock): the Chat Completions wire format. */
export class OpenAiAdapter implements ProviderAdapter {
  constructor(private readonly dialect: OpenAiDialect) {}

  unsupportedParameter(request: ChatRequest, deployment: ResolvedDeployment): string | null {
    if (request.n > 1 && !deployment.capabilities.has('n')) return 'n';
    return refusedParameter(this.dialect.parameters, request, deployment) ?? unsupportedDocument(request, this.dialect.documents);
  }

  unsentParameters(request: ChatRequest, deployment: ResolvedDeployment): readonly string[] {
    return unsentParameters(this.dialect.parameters, request, deployment);
  }

  async chat(call: UpstreamCall): Promise<ChatResponse> {
    return fromOpenAiCompletion(await readJsonBody(await this.send(call, false), call.signal, call.maxAnswerBytes));
  }

  async chatStream(call: UpstreamCall): Promise<UpstreamStream> {
    const body = await this.send(call, true);
    const translator = new OpenAiStreamTranslator();
    return {
      get providerRequestId() {
        return translator.providerRequestId;
      },
      events: translateSseBody(body, translator, call.signal),
    };
  }

  /** `POST …/embeddings` beside the dialect's chat path (so Azure keeps its deployment path and api-version). */
  async embed(call: EmbeddingsCall): Promise<EmbeddingsResponse> {
    const { deployment } = call;
    const path = joinPath(call.baseUrl.pathname, this.dialect.path(deployment).replace(/\/chat\/completions(?=\?|$)/, '/embeddings'));
    const headers = { 'content-type': 'application/json', accept: 'application/json', ...this.dialect.headers(deployment) };
    const body = preparedBody(call.request, deployment, 'embeddings', () => toOpenAiEmbeddingsRequest(call.request, this.dialect.modelInBody ? deployment.model : null));
    const response = await postUpstream(call, path, headers, body, this.errorMapper);
    const json = await readJsonBody(response.body, call.signal, call.maxAnswerBytes);
    const requestId = response.headers['x-request-id'];
    // eslint-disable-next-line no-restricted-syntax -- overrides a key it has: the shape is shared
    return { ...fromOpenAiEmbeddings(json, call.request.inputs.length), providerRequestId: firstHeader(requestId) ?? null };
  }

  /** `POST …/moderations` beside the dialect's chat path, like embeddings. */
  async moderate(call: ModerationCall): Promise<ModerationResponse> {
    const { deployment } = call;
    const path = joinPath(call.baseUrl.pathname, this.dialect.path(deployment).replace(/\/chat\/completions(?=\?|$)/, '/moderations'));
    const headers = { 'content-type': 'application/json', accept: 'application/json', ...this.dialect.headers(deployment) };
    const body = preparedBody(call.request, deployment, 'moderation', () => toOpenAiModerationRequest(call.request, this.dialect.modelInBody ? deployment.model : null));
    const response = await postUpstream(call, path, headers, body, this.errorMapper);
    const json = await readJsonBody(response.body, call.signal, call.maxAnswerBytes);
    // eslint-disable-next-line no-restricted-syntax -- overrides a key it has: the shape is shared
    return { ...fromOpenAiModeration(json, call.request.inputs.length), providerRequestId: firstHeader(response.headers['x-request-id']) ?? null };
  }

  private async send(call: UpstreamCall, stream: boolean) {
    const { deployment } = call;
    const body = preparedBody(call.request, deployment, stream ? 'stream' : 'buffered', () => toOpenAiRequest(call.request, {
      model: this.dialect.modelInBody ? deployment.model : null,
      maxTokensField: this.dialect.maxTokensField,
      stream,
    }));
    const headers = { 'content-type': 'application/json', accept: stream ? 'text/event-stream' : 'application/json', ...this.dialect.headers(deployment) };
    const path = joinPath(call.baseUrl.pathname, this.dialect.path(deployment));
    return (await postUpstream(call, path, headers, body, this.errorMapper)).body;
  }

  private readonly errorMapper = (status: number, headers: Record<string, string | string[] | undefined>, text: string) =>
    errorFromBody(status, headers, text, this.dialect.requestIdHeaders ?? DEFAULT_REQUEST_ID_HEADERS);
}

function errorFromBody(status: number, headers: Record<string, string | string[] | undefined>, text: string, requestIdHeaders: readonly string[]): ProviderError {
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
  return httpError(status, headers, errorClass, detail, requestIdHeaders);
}
