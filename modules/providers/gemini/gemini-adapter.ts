import { type ChatRequest, type ChatResponse, ProviderError } from '../../canonical/index.js';
import type { ResolvedDeployment } from '../../../projections/routing-snapshot/index.js';
import type { ProviderAdapter, UpstreamCall, UpstreamStream } from '../provider-adapter.js';
import { GEMINI_DOCUMENTS, unsupportedDocument } from '../parameters/document-support.js';
import { refusedParameter, unsentParameters } from '../parameters/parameter-table.js';
import { GEMINI_PARAMETERS } from './gemini-parameters.js';
import { translateSseBody } from '../streaming/sse-translation.js';
import { geminiHttpError } from './gemini-errors.js';
import { GeminiRequestProblem, toGeminiRequest } from './gemini-request.js';
import { fromGeminiResponse } from './gemini-response.js';
import { GeminiStreamTranslator } from './gemini-stream.js';
import { preparedBody } from '../prepared-body.js';
import { RequestScoped } from '../../../src/kernel/index.js';
import type { GeminiRequest } from './gemini-wire.js';
import { joinPath, postUpstream, readJsonBody } from '../upstream-post.js';

/** Gemini refuses more stop sequences than this. */
const DEFAULT_API_VERSION = 'v1beta';

/**
 * Google's Gemini API (`generateContent` / `streamGenerateContent?alt=sse`), keyed by the
 * `x-goog-api-key` header so the key never appears in a URL (or in a log line that prints one).
 */
export class GeminiAdapter implements ProviderAdapter {
  /** Built once per request: the check in `unsupportedParameter` and the call reuse the same body. */
  private readonly built = new RequestScoped<ChatRequest, GeminiRequest | GeminiRequestProblem>('switchyard.geminiRequest');

  unsupportedParameter(request: ChatRequest, deployment: ResolvedDeployment): string | null {
    if (request.n > 1 && !deployment.capabilities.has('n')) return 'n';
    const refused = refusedParameter(GEMINI_PARAMETERS, request, deployment) ?? unsupportedDocument(request, GEMINI_DOCUMENTS);
    if (refused) return refused;
    const built = this.build(request);
    return built instanceof GeminiRequestProblem ? built.param : null;
  }

  unsentParameters(request: ChatRequest, deployment: ResolvedDeployment): readonly string[] {
    return unsentParameters(GEMINI_PARAMETERS, request, deployment);
  }

  async chat(call: UpstreamCall): Promise<ChatResponse> {
    return fromGeminiResponse(await readJsonBody(await this.send(call, false), call.signal, call.maxAnswerBytes));
  }

  async chatStream(call: UpstreamCall): Promise<UpstreamStream> {
    const body = await this.send(call, true);
    const translator = new GeminiStreamTranslator();
    return {
      get providerRequestId() {
        return translator.providerRequestId;
      },
      events: translateSseBody(body, translator, call.signal),
      toolArguments: 'object', // each functionCall arrives whole, its args an object
    };
  }

  private build(request: ChatRequest): GeminiRequest | GeminiRequestProblem {
    let built = this.built.get(request);
    if (!built) {
      try {
        built = toGeminiRequest(request);
      } catch (error) {
        if (!(error instanceof GeminiRequestProblem)) throw error;
        built = error;
      }
      this.built.set(request, built);
    }
    return built;
  }

  private async send(call: UpstreamCall, stream: boolean) {
    const payload = this.build(call.request);
    if (payload instanceof GeminiRequestProblem) throw new ProviderError('invalid_request', payload.message);
    // The same body for every Gemini deployment (the model is in the path), and for both modes (so is `alt=sse`).
    const body = preparedBody(call.request, this, 'any', () => payload);
    const { deployment } = call;
    const credential = deployment.provider.credential;
    const headers = {
      'content-type': 'application/json',
      accept: stream ? 'text/event-stream' : 'application/json',
      ...(credential ? { 'x-goog-api-key': credential.reveal() } : {}),
    };
    const path = joinPath(call.baseUrl.pathname, geminiPath(deployment, stream));
    return (await postUpstream(call, path, headers, body, geminiHttpError)).body;
  }
}

/**
 * `/v1beta/models/{model}:generateContent`. The deployment's model is a model id (`gemini-2.5-flash`)
 * or a full resource name (`models/…`, `tunedModels/…`); the provider's apiVersion picks v1 or v1beta.
 */
export function geminiPath(deployment: ResolvedDeployment, stream: boolean): string {
  const version = deployment.provider.apiVersion ?? DEFAULT_API_VERSION;
  const resource = deployment.model.includes('/') ? deployment.model : `models/${deployment.model}`;
  const encoded = resource.split('/').map(encodeURIComponent).join('/');
  return `/${encodeURIComponent(version)}/${encoded}${stream ? ':streamGenerateContent?alt=sse' : ':generateContent'}`;
}
