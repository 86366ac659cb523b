import { ContextLengthExceeded, GatewayError, ProviderError } from '../../canonical/index.js';
import type { ResolvedAlias } from '../../../projections/routing-snapshot/index.js';
import { DEADLINE_CODES, DeadlineExceeded } from '../resilience/deadlines.js';
import type { RoutePlan, SkippedRoute } from '../routing/route-planner.js';
import { QUOTA_EXHAUSTED, type TriedRoute } from './attempt-loop.js';
import { contextLengthFromProvider } from './provider-context-length.js';
import { isClientAttributable, providerErrorMessageForClient, withProviderRequestId } from './provider-error-disclosure.js';

/** The request parameter each capability stands for, so a 400 can name what the caller asked for. */
const PARAMETER_OF_CAPABILITY: Readonly<Record<string, string>> = Object.freeze({
  tools: 'tools',
  vision: 'messages',
  json_schema: 'response_format',
  streaming: 'stream',
  n: 'n',
  embeddings: 'model',
  chat: 'model',
  reasoning: 'reasoning_effort',
  audio: 'modalities',
  documents: 'messages',
});

/** What the planner weighed against each route's context window: the prompt and one choice's output. */
export interface ContextDemand {
  inputTokens: number;
  /** Output one choice may produce (asked for or defaulted); 0 for embeddings. */
  outputTokensPerChoice: number;
}

/**
 * The error for a plan that left no route eligible, named after the stage that emptied it and built
 * from the typed skip reasons: a request no route could ever serve is the caller's 400, a budget the
 * caller's 402, and only health makes it a 503.
 */
export function noRouteError(
  alias: ResolvedAlias,
  plan: RoutePlan,
  parameterName: (parameter: string) => string = (p) => p,
  requestedValue: (parameter: string) => string | null = () => null,
  demand: ContextDemand | null = null,
): GatewayError {
  const skipped = plan.skipped.filter((s) => s.stage === plan.emptiedBy);
  switch (plan.emptiedBy) {
    case 'region':
      return new GatewayError(400, 'no_compliant_provider', `No route of '${alias.name}' lies within the allowed regions.`);
    case 'capabilities': {
      const parameter = skipped.find((s) => s.reason === 'unsupported_parameter');
      if (parameter) {
        const name = parameter.detail[0];
        const value = requestedValue(name);
        const asked = value === null ? '' : ` (${value})`;
        return new GatewayError(400, 'unsupported_parameter', `Unsupported parameter '${name}'${asked}: no route of '${alias.name}' can honour it.`, name);
      }
      const lacking = skipped.find((s) => s.reason === 'lacks_capability');
      if (lacking) {
        const missing = lacking.detail;
        if (missing.includes('embeddings')) return new GatewayError(400, 'invalid_request', `The model '${alias.name}' does not serve embeddings.`, 'model');
        if (missing.includes('chat')) return new GatewayError(400, 'invalid_request', `The model '${alias.name}' does not serve chat.`, 'model');
        const known = missing.map((capability) => PARAMETER_OF_CAPABILITY[capability]).find((p) => p !== undefined);
        const param = known === undefined ? null : parameterName(known);
        // Named in the message too: Anthropic's error envelope has no param field.
        const needed = param === null ? '' : ` (needed for '${param}')`;
        return new GatewayError(400, 'unsupported_parameter', `The model '${alias.name}' cannot serve this request: its routes lack ${missing.join(', ')}${needed}.`, param);
      }
      if (skipped.length > 0 && skipped.every((s) => s.reason === 'context_window_too_small')) {
        return contextWindowError(alias, skipped, demand);
      }
      return unavailableError(alias, skipped.map(skippedLine));
    }
    case 'budget':
      return new GatewayError(402, 'budget_exceeded', `The estimated cost of this request exceeds the remaining budget on every route of '${alias.name}'.`);
    case 'health':
    default:
      return unavailableError(alias, skipped.map(skippedLine));
  }
}

/**
 * No route's window holds the request: the numbers of the largest window on offer (the one that came
 * closest), and what the planner weighed against it — the prompt and the output that route would be
 * asked for (the requested or defaulted output, capped at the route's own output limit).
 */
function contextWindowError(alias: ResolvedAlias, skipped: readonly SkippedRoute[], demand: ContextDemand | null): GatewayError {
  const tooSmall = new Set(skipped.map((s) => s.route));
  let largest: { route: string; contextWindow: number; maxOutputTokens: number } | null = null;
  for (const [index, { deployment }] of alias.routes.entries()) {
    const route = `${alias.name}#${index + 1}`;
    if (tooSmall.has(route) && (largest === null || deployment.contextWindow > largest.contextWindow)) {
      largest = { route, contextWindow: deployment.contextWindow, maxOutputTokens: deployment.maxOutputTokens };
    }
  }
  if (demand === null || largest === null) {
    return new GatewayError(400, 'context_length_exceeded', `The request does not fit the context window of any route of '${alias.name}'.`, 'messages');
  }
  const { route, contextWindow, maxOutputTokens } = largest;
  const embeddings = demand.outputTokensPerChoice === 0;
  return new ContextLengthExceeded({
    inputTokens: demand.inputTokens,
    outputTokens: embeddings ? null : Math.min(demand.outputTokensPerChoice, maxOutputTokens),
    contextWindow, route, estimated: true,
  }, 400, embeddings ? 'input' : 'messages');
}

/**
 * Why a request whose attempts ran out failed, for the caller: a disconnect or a deadline first, then a
 * provider's refusal of the request itself, and otherwise 503 (or 429 when every route is rate limited)
 * listing the routes tried and when they recover.
 */
export function exhaustedError(
  alias: ResolvedAlias,
  plan: RoutePlan,
  abortReason: unknown,
  lastError: ProviderError | null,
  tried: readonly TriedRoute[],
  recoveryOf: (route: string) => number | null,
): GatewayError {
  const aborted = abortedError(abortReason);
  if (aborted) return aborted;
  if (lastError && !lastError.fallbackable) return providerRefusal(lastError);
  if (tried.length > 0 && tried.every((t) => t.errorClass === 'answer_too_large')) return oversizedAnswerError(alias, tried, lastError);
  // eslint-disable-next-line no-restricted-syntax -- overrides a key it has: the shape is shared
  const lines = tried.map((t) => ({ ...t, recoversAt: latest(t.recoversAt, recoveryOf(t.route)) }));
  const healthSkipped = plan.skipped.filter((s) => s.stage === 'health').map(skippedLine);
  return withProviderRequestId(unavailableError(alias, [...lines, ...healthSkipped]), lastError);
}

/**
 * Every provider answered, but with more than the gateway reads (answer_too_large): not an outage, and
 * not the caller's fault — 502 upstream_error, the typed reason in `error_class` of each route tried.
 */
function oversizedAnswerError(alias: ResolvedAlias, tried: readonly TriedRoute[], lastError: ProviderError | null): GatewayError {
  const routes = [...new Set(tried.map((t) => t.route))];
  return withProviderRequestId(new GatewayError(
    502, 'upstream_error',
    `The provider's answer was too large to relay (answer_too_large) on every route of '${alias.name}' tried: ${routes.join(', ')}.`,
    null, {}, { candidates_tried: routes.map((route) => ({ route, error_class: 'answer_too_large' })) },
  ), lastError);
}

/** A client that went away (499, never written) or a request-level deadline (504). */
export function abortedError(reason: unknown): GatewayError | null {
  if (reason instanceof DeadlineExceeded) {
    return new GatewayError(504, DEADLINE_CODES[reason.deadline], `The ${reason.deadline} deadline passed before a provider answered.`);
  }
  if (reason instanceof ProviderError && reason.errorClass === 'cancelled') return new GatewayError(499, 'client_disconnected', 'The client disconnected.');
  return null;
}

/**
 * A provider's final "no" about the request itself: the caller's 400 (or the provider's own 4xx), even
 * when it came inside a 200 (Gemini's promptFeedback.blockReason). A provider that rejects the gateway's
 * credentials is the gateway's problem: 502, with none of the provider's text. What of the provider's
 * words the caller may read is decided by the disclosure rule.
 */
export function providerRefusal(error: ProviderError): GatewayError {
  if (error.errorClass === 'auth') return new GatewayError(502, 'upstream_auth_error', providerErrorMessageForClient(error));
  const callerFault = error.errorClass === 'content_policy' || error.errorClass === 'context_length' || error.errorClass === 'invalid_request';
  const status = error.httpStatus && error.httpStatus >= 400 && error.httpStatus < 500 ? error.httpStatus : callerFault ? 400 : 502;
  // A provider's "too long" with its numbers is said again in the caller's own format's words.
  const numbers = error.errorClass === 'context_length' && isClientAttributable(error) ? contextLengthFromProvider(error.providerMessage) : null;
  if (numbers) return new ContextLengthExceeded(numbers, status, 'messages', error.providerRequestId);
  const code = error.errorClass === 'context_length' ? 'context_length_exceeded' : error.errorClass === 'content_policy' ? 'content_policy_violation' : 'invalid_request';
  return new GatewayError(status, code, providerErrorMessageForClient(error));
}

/**
 * 503 all_providers_unavailable: the routes considered (by their alias-level names) and why each could
 * not serve, with retry-after the soonest recovery: the moment the gateway itself will next send a route
 * traffic (a throttle's or an open breaker's end, a quota window's room; 1 s when a route may be tried at
 * once), rounded up to whole seconds. A provider's own retry-after reaches the client only through the
 * throttle it set, so never beyond MAX_THROTTLE_MS. When every route said it is rate limited, that is a
 * 429 the caller's SDK knows to retry, not an outage.
 */
export function unavailableError(alias: ResolvedAlias, attempts: readonly TriedRoute[]): GatewayError {
  const byRoute = new Map<string, TriedRoute>();
  // eslint-disable-next-line no-restricted-syntax -- overrides a key it has: the shape is shared
  for (const a of attempts) byRoute.set(a.route, { ...a, recoversAt: latest(a.recoversAt, byRoute.get(a.route)?.recoversAt ?? null) });
  const routes = [...byRoute.values()];
  const now = Date.now();
  const soonest = routes.reduce<number | null>((min, r) => (r.recoversAt !== null && r.recoversAt > now && (min === null || r.recoversAt < min) ? r.recoversAt : min), null);
  const anyNow = routes.some((r) => r.recoversAt === null || r.recoversAt <= now);
  const retryAfterS = Math.max(1, Math.ceil(((anyNow || soonest === null ? now + 1000 : soonest) - now) / 1000));
  const listed = routes.map((r) => `${r.route} (${r.errorClass})`).join(', ');
  const detail = { candidates_tried: routes.map((r) => ({ route: r.route, error_class: r.errorClass })), retry_after_s: retryAfterS };
  const quotaRefusals = routes.filter((r) => r.errorClass === QUOTA_EXHAUSTED && r.refusal);
  if (quotaRefusals.length > 0 && routes.every((r) => r.errorClass === 'rate_limited' || r.errorClass === QUOTA_EXHAUSTED)) {
    // The gateway's own counters of the providers' quotas refused: name the scope that frees up first.
    const first = quotaRefusals.reduce((a, b) => ((b.recoversAt ?? Infinity) < (a.recoversAt ?? Infinity) ? b : a));
    const reasons = quotaRefusals.map((r) => r.refusal!.message).join(' ');
    // When that group is what frees up first, its own refusal's headers go out whole: retry-after and its
    // x-ratelimit-reset-* count to one instant, taken when it refused (the key's and tenant's headers set
    // at admission stay for the other family). Otherwise another route recovers sooner and says when.
    const own = !anyNow && first.recoversAt !== null && first.recoversAt === soonest && first.refusal!.headers['retry-after'] !== undefined;
    const headers = own ? first.refusal!.headers : { 'retry-after': String(retryAfterS) };
    return new GatewayError(
      429, 'rate_limited', `Every route of '${alias.name}' is rate limited: ${listed}. ${reasons}`,
      null, headers,
      {
        scope: first.refusal!.detail?.scope, limit_type: first.refusal!.detail?.limit_type, setting: first.refusal!.detail?.setting,
        candidates_tried: detail.candidates_tried, retry_after_s: Number(headers['retry-after']),
      },
    );
  }
  if (routes.length > 0 && routes.every((r) => r.errorClass === 'rate_limited')) {
    return new GatewayError(
      429, 'rate_limited', `Every route of '${alias.name}' is rate limited by its provider: ${listed}. Retry after ${retryAfterS} s.`,
      null, { 'retry-after': String(retryAfterS) }, { scope: 'provider', ...detail },
    );
  }
  return new GatewayError(
    503, 'all_providers_unavailable',
    listed ? `Every route of '${alias.name}' failed or is unavailable: ${listed}.` : `No route of '${alias.name}' is available right now.`,
    null, { 'retry-after': String(retryAfterS) }, detail,
  );
}

function skippedLine(skipped: SkippedRoute): TriedRoute {
  return { route: skipped.route, errorClass: skipped.reason, recoversAt: skipped.until };
}

function latest(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return Math.max(a, b);
}
