import type { TokenUsage, UsageEvidence } from '../../../events/index.js';
import type { ChatRequest, ChatResponse, ImplausibleUsage, ProviderError } from '../../canonical/index.js';
import type { ResolvedDeployment } from '../../../projections/routing-snapshot/index.js';
import type { ProviderAdapter } from '../../providers/index.js';
import { BACKSTOP_SLACK_MS } from '../resilience/deadlines.js';
import { cappedForDeployment } from './admission-estimate.js';
import { type AdmittedAttempt, failedOutcome, recordAttempt } from './admitted-attempts.js';
import { attemptFailure } from './attempt-failure.js';
import { GatewayFault } from './gateway-fault.js';
import type { InferenceServices, PipelineSettings } from './inference-services.js';
import { OutputMeter } from './output-meter.js';
import { type UsageTerms, chatUsageBound } from './usage-bound.js';
import type { RoutedRequest } from './request-admission.js';
import { type CallTransport, callTransport } from './upstream-call.js';

/** What a buffered call answered, what it is billed for and on whose word (the provider's, or the gateway's count). */
export interface BufferedReply<Response> {
  response: Response;
  usage: TokenUsage;
  evidence: UsageEvidence;
  /** Why the provider's usage was not believed (evidence `implausible`), or null. */
  implausible: ImplausibleUsage | null;
  providerRequestId: string | null;
}

export type BufferedResult<Response> = ({ kind: 'answered' } & BufferedReply<Response>) | { kind: 'failed'; error: ProviderError };

export type BufferedChatResult = BufferedResult<ChatResponse>;

/** The answer a buffered request settles with. */
export interface BufferedAnswer<Response> {
  response: Response;
  usage: TokenUsage;
}

/** Opens the transport of one call with the signal it is to follow. */
export type TransportOpener = (signal: AbortSignal) => Promise<CallTransport>;

/**
 * One buffered call of any operation; a GatewayFault (the gateway's own failure) is thrown, not
 * returned, because it ends the request. A buffered attempt has no deadline of its own (the request
 * deadline covers it), so the call takes the request's signal itself: only a client disconnect or the
 * request deadline aborts it, as they would a linked per-attempt controller, without one being made and
 * linked for every attempt.
 */
export async function bufferedCall<Response>(
  requestSignal: AbortSignal,
  call: (signal: AbortSignal) => Promise<BufferedReply<Response>>,
): Promise<BufferedResult<Response>> {
  try {
    return { kind: 'answered', ...(await call(requestSignal)) };
  } catch (error) {
    const failure = attemptFailure(error, requestSignal);
    if (failure instanceof GatewayFault) throw failure;
    return { kind: 'failed', error: failure };
  }
}

/**
 * One buffered chat call on `deployment`. The provider's usage is billed when it reports one it can be
 * believed (checkReportedUsage, against the request's bound on this deployment); otherwise the output is
 * counted from the answer and the input taken from the admission estimate (evidence `counted`, or
 * `implausible` when the provider's counts were replaced).
 */
export async function bufferedChatAttempt(
  adapter: ProviderAdapter,
  request: ChatRequest,
  estimatedInputTokens: number,
  deployment: ResolvedDeployment,
  maxAnswerBytes: number,
  requestSignal: AbortSignal,
  transport: TransportOpener,
): Promise<BufferedChatResult> {
  return bufferedCall(requestSignal, async (signal) => {
    const response = await adapter.chat({ request: cappedForDeployment(request, deployment), maxAnswerBytes, ...(await transport(signal)) });
    const meter = new OutputMeter();
    for (const choice of response.choices) {
      meter.observe({ type: 'text', choice: choice.index, text: choice.text });
      for (const call of choice.toolCalls) meter.observe({ type: 'tool_call', choice: choice.index, index: 0, id: call.id, name: call.name, arguments: call.arguments });
    }
    meter.reportedUsage(response.usage);
    const terms: UsageTerms = { estimatedInputTokens, bound: chatUsageBound(request, deployment, estimatedInputTokens) };
    const { usage, evidence, implausible } = meter.usage(terms);
    return { response, usage, evidence, implausible, providerRequestId: response.providerRequestId };
  });
}

/**
 * A buffered operation as an attempt of the attempt loop: `call` gets the turn's deployment's
 * transport, whose undici timeouts sit past the request deadline as a backstop; what it returns is
 * recorded as the turn's AttemptFinished. A failure before any answer is billed nothing; only a success
 * teaches the latency tracker, since a failure's time says nothing about how fast the route answers.
 */
export function bufferedAttempt<Response>(
  services: Pick<InferenceServices, 'pools' | 'latency'>,
  settings: PipelineSettings,
  admitted: RoutedRequest,
  call: (adapter: ProviderAdapter, transport: TransportOpener, deployment: ResolvedDeployment) => Promise<BufferedResult<Response>>,
): AdmittedAttempt<BufferedAnswer<Response>> {
  const idleTimeoutMs = settings.resilience.deadlines.idleTimeoutMs + BACKSTOP_SLACK_MS;
  return async (turn, adapter, traceHeaders) => {
    const started = Date.now();
    const deployment = turn.candidate.deployment;
    const timeouts = { headersTimeoutMs: Math.max(1, admitted.lifetime.remainingMs()) + BACKSTOP_SLACK_MS, idleTimeoutMs };
    const result = await call(adapter, (signal) => callTransport(services.pools, deployment, signal, timeouts, traceHeaders), deployment);
    const latencyMs = Date.now() - started;
    if (result.kind === 'failed') {
      const outcome = failedOutcome(result.error);
      // An answer too large to read was still produced (and is billed by the provider): it is billed at
      // what admission reserved, on the gateway's estimate. Any other failure before an answer bills nothing.
      const billed = result.error.errorClass === 'answer_too_large' ? admitted.journal.reservedUsage() : null;
      recordAttempt(admitted, turn, { outcome, error: result.error, usage: billed, evidence: billed ? 'estimated' : 'provider', latencyMs, ttftMs: null, providerRequestId: null });
      return { answer: null, outcome, error: result.error };
    }
    services.latency.observe(deployment.id, latencyMs);
    recordAttempt(admitted, turn, {
      outcome: 'success', error: null, usage: result.usage, evidence: result.evidence, implausible: result.implausible, latencyMs, ttftMs: null,
      providerRequestId: result.providerRequestId,
    });
    return { answer: { response: result.response, usage: result.usage }, outcome: 'success', error: null };
  };
}
