import type { ServerResponse } from 'node:http';
import { observationOf } from '../../observability/index.js';
import {
  ATTEMPT_TOKEN_CEILING, type ChatRequest, checkDocumentLimits, checkReportedCount, DEFAULT_DOCUMENT_LIMITS, estimateInputTokens, ProviderError, requiredCapabilities,
} from '../../canonical/index.js';
import type { ResolvedDeployment } from '../../../projections/routing-snapshot/index.js';
import { BACKSTOP_SLACK_MS, armDeadline } from '../resilience/deadlines.js';
import { isRefusal } from '../resilience/deployment-gate.js';
import { failedOutcome } from './admitted-attempts.js';
import { attemptFailure } from './attempt-failure.js';
import { type AttemptReport, leaveAfter } from './attempt-loop.js';
import { callableAlias } from './callable-alias.js';
import { providerRefusal } from './client-errors.js';
import { GatewayFault } from './gateway-fault.js';
import type { InferenceServices, PipelineSettings } from './inference-services.js';
import { isClientAttributable } from './provider-error-disclosure.js';
import type { Exchange } from './request-admission.js';
import { callTransport } from './upstream-call.js';
import { TOKEN_COUNT_ANSWER_BYTES } from './answer-size.js';
import { anthropicBetasOf } from './request-headers.js';
import { ContentGuard, ContentPolicyViolation, RemoteCheckUnavailable } from '../../content-safety/index.js';
import { contentPolicyError, guardrailUnavailableError } from './content-policy-refusal.js';
import { AbortScope } from '../../../src/kernel/index.js';

/** The response header that says where a count came from. */
export const TOKEN_COUNT_HEADER = 'x-switchyard-token-count';
export type TokenCountSource = 'provider' | 'estimate';

/** One client format's token-count endpoint: its body → the canonical request, and the count → its answer. */
export interface TokenCountDialect {
  parse(body: unknown): ChatRequest;
  answer(inputTokens: number): unknown;
}

/**
 * Token counting — Anthropic `POST /v1/messages/count_tokens`, OpenAI `POST /v1/responses/input_tokens` —
 * over the canonical request: the alias's first route in plan order decides.
 * When its provider has a count endpoint (Anthropic, Bedrock) the provider counts, translated exactly
 * as a message to that route would be; otherwise — or when the provider's count fails for a reason that
 * is not the caller's — the gateway's tokenizer (cl100k, with the chat template's overhead) answers,
 * labelled as an estimate in `x-switchyard-token-count`. The provider's count is a call to the
 * deployment like any other: it takes the deployment gate's lease (breaker, concurrency slot, throttle),
 * so a deployment held back is not asked and the estimate answers. A count is not a generation: nothing
 * is admitted, reserved or billed, and no request events are written. Access rules are those of inference.
 */
export class TokenCountPipeline {
  constructor(
    private readonly services: InferenceServices,
    private readonly settings: PipelineSettings,
  ) {}

  /** Throws a GatewayError before anything was written (the controller renders it in its format's envelope). */
  async handle(exchange: Exchange, dialect: TokenCountDialect): Promise<void> {
    const principal = this.services.auth.authenticate(exchange.headers, 'inference');
    observationOf(exchange.raw)?.identify(principal);
    const request = dialect.parse(exchange.body);
    // The same document bounds as a message: a count may be sent to a provider's count endpoint.
    checkDocumentLimits(request, this.settings.documents ?? DEFAULT_DOCUMENT_LIMITS);
    // Anthropic's count endpoint takes the same betas as a message (a beta can change what the prompt is);
    // other routes answer with a count or the estimate, which no beta changes.
    const betas = anthropicBetasOf(exchange.headers);
    if (betas !== null) request.anthropicBetas = betas;
    const snapshot = this.services.routing.current;
    const alias = callableAlias(snapshot, principal, request.model);
    // A provider that counts is sent the prompt: the content policy in force applies as it does to the request itself.
    const contentPolicy = snapshot.contentPolicyFor(principal.tenantId, principal.keyId, alias.name);
    const sent = contentPolicy ? await inspected(request, new ContentGuard(contentPolicy, { tenantId: principal.tenantId, requestId: exchange.requestId, sessionId: null }, this.services.content)) : request;
    const estimate = estimateInputTokens(sent);
    const adapters = this.services.adapters;
    const plan = this.services.planner.plan({
      alias,
      // eslint-disable-next-line no-restricted-syntax -- overrides a key it has: the shape is shared
      needs: requiredCapabilities({ ...request, stream: false }),
      estimatedInputTokens: estimate,
      reservedOutputTokens: 0,
      at: new Date(),
      stream: false,
      affinity: { principal: `${principal.tenantId}/${principal.keyId}`, sessionId: null, requestId: exchange.requestId },
      adapterServes: (deployment) => adapters.for(deployment.provider.type) !== undefined,
    });
    const route = plan.candidates[0]?.deployment ?? null;
    const counted = route ? await this.providerCount(route, sent, exchange.raw) : null;
    answer(exchange, dialect.answer(counted ?? estimate), counted === null ? 'estimate' : 'provider');
  }

  /**
   * The provider's count, or null when this route has none or could not give one. The call passes the
   * deployment gate as an attempt does, so a deployment the gate holds back (breaker open, saturated,
   * throttled) is not asked, and what the call says about the provider reaches its breaker.
   */
  private async providerCount(deployment: ResolvedDeployment, request: ChatRequest, raw: ServerResponse): Promise<number | null> {
    const adapter = this.services.adapters.for(deployment.provider.type);
    if (!adapter?.countTokens) return null;
    const lease = await this.services.gate.enter(deployment);
    if (isRefusal(lease)) return null;
    const abort = new AbortScope();
    const deadlines = this.settings.resilience.deadlines;
    // The count is the call's first and only output: it is due when a first token would be.
    const deadline = armDeadline(abort, 'ttft', deadlines.ttftTimeoutMs);
    const onClose = () => abort.abort(new ProviderError('cancelled', 'the client went away'));
    raw.once('close', onClose);
    let report: Pick<AttemptReport<number>, 'outcome' | 'error'> | null = null;
    try {
      const transport = await callTransport(this.services.pools, deployment, abort.signal, {
        headersTimeoutMs: deadlines.ttftTimeoutMs + BACKSTOP_SLACK_MS,
        idleTimeoutMs: deadlines.idleTimeoutMs + BACKSTOP_SLACK_MS,
      });
      // The provider's number passes the one boundary: a count that is not a plausible one is the
      // provider's fault (its breaker hears of it), and the estimate answers instead.
      const counted = checkReportedCount(await adapter.countTokens({ request, maxAnswerBytes: TOKEN_COUNT_ANSWER_BYTES, ...transport }), ATTEMPT_TOKEN_CEILING);
      if (counted === null) throw new ProviderError('malformed_response', 'the provider answered a token count that is not a plausible count');
      report = { outcome: 'success', error: null };
      return counted;
    } catch (error) {
      const failure = attemptFailure(error, abort.signal);
      if (failure instanceof GatewayFault) throw failure.error;
      report = { outcome: failedOutcome(failure), error: failure };
      // The caller's own mistake is theirs to see; an unavailable provider leaves the estimate.
      if (isClientAttributable(failure)) throw providerRefusal(failure);
      return null;
    } finally {
      leaveAfter(lease, report);
      clearTimeout(deadline);
      raw.off('close', onClose);
    }
  }
}

function answer(exchange: Exchange, payload: unknown, source: TokenCountSource): void {
  if (exchange.raw.destroyed) return;
  const body = JSON.stringify(payload);
  exchange.raw.writeHead(200, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'x-request-id': exchange.requestId,
    [TOKEN_COUNT_HEADER]: source,
  });
  exchange.raw.end(body);
}

/**
 * The prompt as a provider may be sent it for counting; a block is the client's 400, and a fail-closed remote check
 * without a verdict its 503, as for the request itself (nothing is recorded: counting writes no events).
 */
async function inspected(request: ChatRequest, guard: ContentGuard): Promise<ChatRequest> {
  try {
    return await guard.inspectRequest(request);
  } catch (error) {
    if (error instanceof ContentPolicyViolation) throw contentPolicyError(error);
    throw error instanceof RemoteCheckUnavailable ? guardrailUnavailableError(error) : error;
  } finally {
    guard.dispose();
  }
}
