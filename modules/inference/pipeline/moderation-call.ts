import { type ModerationRequest, type ModerationResponse, ProviderError, ZERO_USAGE, estimateTokens, GatewayError } from '../../canonical/index.js';
import { type ModerationCaller, RemoteCheckFailure } from '../../content-safety/index.js';
import type { ProviderAdapter } from '../../providers/index.js';
import type { Principal } from '../../../projections/key-index/index.js';
import type { ResolvedDeployment } from '../../../projections/routing-snapshot/index.js';
import { uuidv7 } from '../../../src/kernel/index.js';
import { observationOf } from '../../observability/index.js';
import type { ServerResponse } from 'node:http';
import { runAdmittedAttempts } from './admitted-attempts.js';
import { type BufferedResult, type TransportOpener, bufferedAttempt, bufferedCall } from './buffered-attempt.js';
import type { InferenceServices, PipelineSettings } from './inference-services.js';
import { QuotaGroupCharges } from './quota-group-charges.js';
import { Decimal } from 'decimal.js';
import { estimatedCost } from '../routing/route-planner.js';
import { BACKSTOP_SLACK_MS, DeadlineExceeded } from '../resilience/deadlines.js';
import { type RoutedRequest, budgetScopes } from './request-admission.js';
import { RequestJournal } from './request-journal.js';
import { RequestLifetime } from './request-lifetime.js';

/** The request a moderation check is made for: its id (the new request's causation), its caller, and its client's connection. */
export interface CheckedRequest {
  requestId: string;
  principal: Principal;
  raw: ServerResponse;
}

/** A moderation answer is a small JSON document per input; this bounds what is read of it. */
const MAX_MODERATION_ANSWER_BYTES = 1024 * 1024;

/**
 * A content policy's moderation check as a request of its own (docs/content-safety-remote.md, "Moderation"):
 * a fresh request id whose stream holds RequestAdmitted (operation `moderation`, the checked request's tenant and
 * key), its AttemptFinished (input tokens at the deployment's price) and RequestCompleted, with the checked
 * request's id as causation and correlation in every event's metadata. It runs on the alias's routes whose
 * deployment declares `moderation` and whose adapter can moderate, through the deployment gate (breakers),
 * retries and fallback of the attempt loop and the deployments' pools, bounded by the check's timeout (and ended
 * when the checked request's client goes away). Its cost is reserved on the checked request's tenant and key
 * budgets — on input a spent hard budget refuses it with the budget's own 402, which refuses the checked request (no
 * check is bought for a request that could not be paid for); on output the answer is already paid for and the check
 * is only counted — and settled with what it cost. It takes no rate-limit or
 * concurrency permit of its own: it runs inside the checked request, which holds them. Any other failure is a
 * RemoteCheckFailure (no verdict).
 */
export function moderationCaller(services: InferenceServices, settings: PipelineSettings, checked: CheckedRequest): ModerationCaller {
  return async (aliasName, texts, timeoutMs, direction) => {
    const snapshot = services.routing.current;
    const alias = snapshot.aliases.get(aliasName);
    if (!alias) throw new RemoteCheckFailure('unavailable', `the moderation alias ${aliasName} is not published`);
    const requestId = uuidv7();
    const { principal } = checked;
    const estimatedInputTokens = texts.reduce((sum, text) => sum + Math.max(1, estimateTokens(text)), 0);
    const plan = services.planner.plan({
      alias, needs: ['moderation'], estimatedInputTokens, reservedOutputTokens: 0, at: new Date(), stream: false,
      affinity: { principal: `${principal.tenantId}/${principal.keyId}`, sessionId: null, requestId },
      adapterServes: (deployment, capability) => capability !== 'moderation' || services.adapters.for(deployment.provider.type)?.moderate !== undefined,
    });
    if (plan.emptiedBy) throw new RemoteCheckFailure('unavailable', `the moderation alias ${aliasName} has no route that can moderate`);
    // Reserved before anything is recorded: a refusal here is the checked request's (402), and this one never existed.
    const budgets = budgetScopes(principal);
    const dearest = budgets.length
      ? plan.candidates.reduce((max, candidate) => Decimal.max(max, estimatedCost(candidate.price, { estimatedInputTokens, reservedOutputTokens: 0 })), new Decimal(0))
      : 0;
    const budget = await services.budgets.reserve(budgets, dearest, { enforce: direction === 'input', holdMs: timeoutMs + BACKSTOP_SLACK_MS, requestId });
    // Observed as a request of its own (metrics, its log line, a span under the checked request's), settled below.
    const observation = observationOf(checked.raw)?.nested(requestId, 'moderation') ?? null;
    let settledStatus = 500;
    const journal = new RequestJournal(services.committer, settings.durability, requestId, {
      actor: `key:${principal.keyId}`, correlationId: checked.requestId, causationId: checked.requestId, nodeId: settings.nodeId,
    }, observation);
    const lifetime = new RequestLifetime(checked.raw, timeoutMs);
    const quota = new QuotaGroupCharges(services.rateLimits, { requests: 1, inputTokens: estimatedInputTokens, outputTokens: 0 });
    const request: ModerationRequest = { inputs: [...texts] };
    try {
      await journal.admit({
        requestId, tenantId: principal.tenantId, keyId: principal.keyId, alias: alias.name, aliasVersion: alias.version, snapshotPosition: snapshot.version,
        clientFormat: 'openai', operation: 'moderation', stream: false, estimatedInputTokens, reservedOutputTokens: 0, idempotencyKey: null,
      });
      const admitted: RoutedRequest = {
        requestId, principal, alias, journal, lifetime, observation, contentGuard: null, release: () => undefined,
        answeredBy: 'providers', plan, quota, cache: { status: 'bypass' }, unsent: () => [],
      };
      const answer = await runAdmittedAttempts(services, settings, admitted, bufferedAttempt(services, settings, admitted, (adapter, transport, deployment) =>
        moderationAttempt(adapter, request, estimatedInputTokens, deployment, lifetime.signal, transport),
      ));
      // A verdict whose billing could not be recorded is not used: the check counts as one that gave no verdict.
      await journal.complete({ status: 'success', httpStatus: 200, errorCode: null, cacheHit: false }).catch((error: unknown) => {
        throw new RemoteCheckFailure('unavailable', `the moderation request ${requestId} could not be recorded (${(error as Error).message})`);
      });
      settledStatus = 200;
      return { results: answer.response.results };
    } catch (error) {
      if (error instanceof GatewayError) {
        observation?.answeredWith(error);
        settledStatus = error.status;
      }
      if (error instanceof RemoteCheckFailure) throw error;
      const timedOut = lifetime.signal.reason instanceof DeadlineExceeded;
      if (timedOut) {
        settledStatus = 504;
        throw new RemoteCheckFailure('timeout', `the moderation alias ${aliasName} did not answer in ${timeoutMs} ms`);
      }
      if (error instanceof GatewayError) throw new RemoteCheckFailure('unavailable', `the moderation alias ${aliasName} could not answer (${error.code})`);
      throw error;
    } finally {
      observation?.settled(settledStatus);
      lifetime.dispose();
      quota.settle(journal.usageByDeployment());
      budget.settle(journal.cost());
    }
  };
}

/**
 * One moderation call on `deployment`. OpenAI's moderation answer reports no usage: the call is billed at the
 * gateway's estimate of its input tokens (evidence `estimated`), at the deployment's input price.
 */
function moderationAttempt(
  adapter: ProviderAdapter, request: ModerationRequest, estimatedInputTokens: number, deployment: ResolvedDeployment, requestSignal: AbortSignal, transport: TransportOpener,
): Promise<BufferedResult<ModerationResponse>> {
  return bufferedCall(requestSignal, async (signal) => {
    // The plan only keeps deployments whose adapter can moderate.
    const response = await adapter.moderate!({ request, maxAnswerBytes: MAX_MODERATION_ANSWER_BYTES, ...(await transport(signal)) });
    if (response.results.length !== request.inputs.length) throw new ProviderError('malformed_response', 'the provider did not return one moderation result per input');
    // eslint-disable-next-line no-restricted-syntax -- overrides a key it has: the shape is shared
    return { response, usage: { ...ZERO_USAGE, input: estimatedInputTokens }, evidence: 'estimated', implausible: null, providerRequestId: response.providerRequestId };
  });
}
