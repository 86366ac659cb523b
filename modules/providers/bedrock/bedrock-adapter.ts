import type { Dispatcher } from 'undici';
import { type ChatRequest, type ChatResponse, type EmbeddingsResponse, ProviderError, type ReportedField, type StreamEvent, reportedField } from '../../canonical/index.js';
import type { ResolvedDeployment } from '../../../projections/routing-snapshot/index.js';
import type { EmbeddingsCall, ProviderAdapter, UpstreamCall, UpstreamStream } from '../provider-adapter.js';
import { requestIdFrom, transportError, withProviderRequestId } from '../upstream-errors.js';
import { fromTitanEmbeddingResponse, toTitanEmbeddingRequest } from './bedrock-embeddings.js';
import { BEDROCK_REQUEST_ID_HEADERS, bedrockHttpError } from './bedrock-errors.js';
import { decodeEventStream } from './bedrock-event-stream.js';
import { converseUnsupportedParameter, toConverseRequest } from './bedrock-request.js';
import { fromConverseResponse } from './bedrock-response.js';
import { BedrockSigner } from './bedrock-signer.js';
import { ConverseStreamTranslator } from './bedrock-stream.js';
import { EVENT_STREAM_CONTENT_TYPE } from './bedrock-wire.js';
import { postUpstream, readJsonBody } from '../upstream-post.js';
import { preparedBody } from '../prepared-body.js';
import { AbortScope } from '../../../src/kernel/index.js';
import { unsentParameters } from '../parameters/parameter-table.js';
import { withUnsentThinking } from '../parameters/thinking-continuation.js';
import { BEDROCK_PARAMETERS } from './bedrock-parameters.js';

type Operation = 'converse' | 'converse-stream' | 'invoke' | 'count-tokens';

/** Parallel InvokeModel calls per embeddings request (Titan embeds one text per call). */
const EMBED_CONCURRENCY = 4;

/**
 * Amazon Bedrock Runtime: Converse (buffered), ConverseStream (binary event-stream) and InvokeModel
 * for Titan embeddings, every request SigV4-signed with the provider's AWS credentials.
 * Endpoints: `POST {base}/model/{modelId}/converse | converse-stream | invoke | count-tokens`.
 */
export class BedrockAdapter implements ProviderAdapter {
  constructor(private readonly signer: BedrockSigner = new BedrockSigner()) {}

  unsupportedParameter(request: ChatRequest, deployment: ResolvedDeployment): string | null {
    return converseUnsupportedParameter(request, deployment);
  }

  unsentParameters(request: ChatRequest, deployment: ResolvedDeployment): readonly string[] {
    return withUnsentThinking(unsentParameters(BEDROCK_PARAMETERS, request, deployment), request);
  }

  async chat(call: UpstreamCall): Promise<ChatResponse> {
    const response = await this.send(call, 'converse', this.converseBody(call.request, call.deployment), call.signal);
    return fromConverseResponse(await readJsonBody(response.body, call.signal, call.maxAnswerBytes), requestIdOf(response.headers));
  }

  async chatStream(call: UpstreamCall): Promise<UpstreamStream> {
    const response = await this.send(call, 'converse-stream', this.converseBody(call.request, call.deployment), call.signal);
    const body = response.body;
    const translator = new ConverseStreamTranslator();
    const providerRequestId = requestIdOf(response.headers);
    const events = async function* (): AsyncGenerator<StreamEvent> {
      let finished = false;
      try {
        // After `metadata` keep reading to the end of the body so the connection returns to the pool.
        for await (const frame of decodeEventStream(transportGuarded(body, call.signal))) {
          // Element by element, not `yield*` of the array (an async iterator of its own per frame).
          if (!translator.done) for (const event of translator.translate(frame)) yield event;
        }
        finished = true;
      } catch (error) {
        throw error instanceof ProviderError ? withProviderRequestId(error, providerRequestId) : transportError(error, call.signal);
      } finally {
        if (!finished) body.destroy();
      }
    };
    // Converse streams a toolUse input as pieces of the JSON document its buffered answer returns whole.
    return { providerRequestId, events: events(), toolArguments: 'object' };
  }

  /** CountTokens: the Converse translation of the request (its messages, system prompt and tools), counted by Bedrock. */
  async countTokens(call: UpstreamCall): Promise<unknown> {
    const { messages, system, toolConfig } = toConverseRequest(call.request);
    const converse = { messages, ...(system !== undefined ? { system } : {}), ...(toolConfig !== undefined ? { toolConfig } : {}) };
    const response = await this.send(call, 'count-tokens', JSON.stringify({ input: { converse } }), call.signal);
    const answer = (await readJsonBody(response.body, call.signal, call.maxAnswerBytes)) as { inputTokens?: unknown } | null;
    if (answer?.inputTokens === undefined) throw new ProviderError('malformed_response', 'the provider answered CountTokens without inputTokens');
    return answer.inputTokens;
  }

  /** One InvokeModel per input (Titan takes one text), a few at a time; the first failure cancels the rest. */
  async embed(call: EmbeddingsCall): Promise<EmbeddingsResponse> {
    const { inputs, dimensions } = call.request;
    const vectors: number[][] = new Array(inputs.length);
    // Every input's count as reported; one input without a count leaves the whole batch unreported.
    const counts: ReportedField[] = new Array(inputs.length);
    let unreported = false;
    let providerRequestId: string | null = null;
    const siblings = new AbortScope(call.signal);
    let next = 0;
    const worker = async () => {
      while (next < inputs.length && !siblings.signal.aborted) {
        const index = next++;
        const response = await this.send(call, 'invoke', JSON.stringify(toTitanEmbeddingRequest(inputs[index], dimensions)), siblings.signal);
        providerRequestId ??= requestIdOf(response.headers);
        const { vector, inputTokens: tokens } = fromTitanEmbeddingResponse(await readJsonBody(response.body, siblings.signal, call.maxAnswerBytes));
        vectors[index] = vector;
        if (tokens === null) unreported = true;
        else counts[index] = reportedField(`inputTextTokenCount[${index}]`, tokens, true);
      }
    };
    try {
      await Promise.all(
        Array.from({ length: Math.min(EMBED_CONCURRENCY, inputs.length) }, () =>
          worker().catch((error: unknown) => {
            siblings.abort(error);
            throw error;
          }),
        ),
      );
      // A worker stops taking inputs once the call is aborted between two of them: never answer with holes.
      if (siblings.signal.aborted) throw transportError(siblings.signal.reason, siblings.signal);
    } finally {
      siblings.dispose();
    }
    return { providerRequestId, vectors, inputTokens: unreported ? null : counts };
  }

  /**
   * Converse and ConverseStream take the same body; it depends on the deployment only through its output
   * ceiling (a thinking budget without a client max_tokens), so it is prepared per deployment.
   */
  private converseBody(request: ChatRequest, deployment: ResolvedDeployment): string {
    return preparedBody(request, deployment, 'converse', () => toConverseRequest(request, deployment.maxOutputTokens));
  }

  private async send(
    call: Omit<UpstreamCall, 'request'>, operation: Operation, body: string, signal: AbortSignal,
  ): Promise<Dispatcher.ResponseData> {
    const path = `${call.baseUrl.pathname.replace(/\/+$/, '')}/model/${encodeURIComponent(call.deployment.model)}/${operation}`;
    const headers = await this.signer.sign(call.deployment, {
      method: 'POST',
      url: new URL(path, call.baseUrl.origin),
      headers: {
        'content-type': 'application/json',
        accept: operation === 'converse-stream' ? EVENT_STREAM_CONTENT_TYPE : 'application/json',
      },
      body,
    });
    // eslint-disable-next-line no-restricted-syntax -- overrides a key it has: the shape is shared
    return postUpstream({ ...call, signal }, path, headers, body, bedrockHttpError);
  }
}

/** Transport failures become typed errors before the framer sees them, so framing errors stay distinct. */
async function* transportGuarded(body: AsyncIterable<unknown>, signal: AbortSignal): AsyncGenerator<Uint8Array> {
  try {
    for await (const chunk of body) yield chunk as Uint8Array;
  } catch (error) {
    throw transportError(error, signal);
  }
}

function requestIdOf(headers: Record<string, string | string[] | undefined>): string | null {
  return requestIdFrom(headers, BEDROCK_REQUEST_ID_HEADERS);
}
