import { ProviderError } from '../../modules/canonical/provider-error.js';
import { abortedError, exhaustedError, noRouteError, providerRefusal, unavailableError } from '../../modules/inference/pipeline/client-errors.js';
import { DeadlineExceeded } from '../../modules/inference/resilience/deadlines.js';
import type { RoutePlan, SkippedRoute } from '../../modules/inference/routing/route-planner.js';
import { testAlias, testDeployment } from '../support/routing-fixtures.js';

const alias = testAlias([testDeployment('secret-deployment-a'), testDeployment('secret-deployment-b')]);
const skip = (route: string, stage: SkippedRoute['stage'], reason: SkippedRoute['reason'], detail: string[] = [], until: number | null = null): SkippedRoute => ({
  deploymentId: `secret-deployment-${route.slice(-1)}`, route, stage, reason, detail, until,
});
const emptied = (by: RoutePlan['emptiedBy'], skipped: SkippedRoute[]): RoutePlan => ({ candidates: [], skipped, reason: '', emptiedBy: by });

describe('client errors from typed reasons', () => {
  test('no route passed: region → 400, a missing capability → 400 naming the parameter, a parameter no route honours → 400 naming it', () => {
    expect(noRouteError(alias, emptied('region', [skip('chat#1', 'region', 'outside_region')]))).toMatchObject({ status: 400, code: 'no_compliant_provider' });
    expect(noRouteError(alias, emptied('capabilities', [skip('chat#1', 'capabilities', 'lacks_capability', ['tools'])]))).toMatchObject({ status: 400, code: 'unsupported_parameter', param: 'tools' });
    expect(noRouteError(alias, emptied('capabilities', [skip('chat#1', 'capabilities', 'lacks_capability', ['json_schema'])]))).toMatchObject({ param: 'response_format' });
    expect(noRouteError(alias, emptied('capabilities', [skip('chat#1', 'capabilities', 'lacks_capability', ['embeddings'])]))).toMatchObject({ status: 400, code: 'invalid_request', param: 'model' });
    expect(noRouteError(alias, emptied('capabilities', [skip('chat#1', 'capabilities', 'unsupported_parameter', ['n'])]))).toMatchObject({ status: 400, code: 'unsupported_parameter', param: 'n' });
  });

  test('the context window on every route → 400 context_length_exceeded; otherwise unpriced routes are an outage', () => {
    const tooBig = [skip('chat#1', 'capabilities', 'context_window_too_small'), skip('chat#2', 'capabilities', 'context_window_too_small')];
    expect(noRouteError(alias, emptied('capabilities', tooBig))).toMatchObject({ status: 400, code: 'context_length_exceeded' });
    const unpriced = noRouteError(alias, emptied('capabilities', [skip('chat#1', 'capabilities', 'no_price_in_effect')]));
    expect(unpriced).toMatchObject({ status: 503, detail: { candidates_tried: [{ route: 'chat#1', error_class: 'no_price_in_effect' }] } });
  });

  test('health → 503 listing routes by alias-level name, never deployment ids, with retry-after the soonest recovery', () => {
    const now = Date.now();
    const error = noRouteError(alias, emptied('health', [skip('chat#1', 'health', 'circuit_open', [], now + 7_500), skip('chat#2', 'health', 'circuit_open', [], now + 20_000)]));
    expect(error).toMatchObject({ status: 503, code: 'all_providers_unavailable', headers: { 'retry-after': '8' } });
    expect(JSON.stringify({ message: error.message, detail: error.detail })).not.toContain('secret-deployment');
    expect(noRouteError(alias, emptied('budget', [skip('chat#1', 'budget', 'over_budget')]))).toMatchObject({ status: 402, code: 'budget_exceeded' });
  });

  test('every route rate limited is a 429 with the provider scope, not an outage', () => {
    const error = unavailableError(alias, [{ route: 'chat#1', errorClass: 'rate_limited', recoversAt: null }, { route: 'chat#2', errorClass: 'rate_limited', recoversAt: null }]);
    expect(error).toMatchObject({ status: 429, code: 'rate_limited', detail: { scope: 'provider' } });
  });

  test('exhausted: a disconnect (499) and a deadline (504) come first, then a provider refusal, then 503', () => {
    const plan = emptied(null, []);
    const tried = [{ route: 'chat#1', errorClass: 'transient', recoversAt: null }];
    expect(exhaustedError(alias, plan, new ProviderError('cancelled', 'gone'), null, tried, () => null)).toMatchObject({ status: 499 });
    expect(exhaustedError(alias, plan, new DeadlineExceeded('request'), null, tried, () => null)).toMatchObject({ status: 504, code: 'request_timeout' });
    expect(exhaustedError(alias, plan, undefined, new ProviderError('invalid_request', 'provider returned 400: bad', 400), tried, () => null)).toMatchObject({ status: 400 });
    expect(exhaustedError(alias, plan, undefined, new ProviderError('transient', 'x', 500), tried, () => Date.now() + 3_000)).toMatchObject({ status: 503, headers: { 'retry-after': '3' } });
    expect(abortedError(undefined)).toBeNull();
  });

  test("a provider's refusal: the caller's 4xx, a status-less content policy 400 in every operation, auth failures 502 without the provider's text", () => {
    expect(providerRefusal(new ProviderError('content_policy', 'blocked: SAFETY'))).toMatchObject({ status: 400, code: 'content_policy_violation' });
    expect(providerRefusal(new ProviderError('context_length', 'too long', 413))).toMatchObject({ status: 413, code: 'context_length_exceeded' });
    const auth = providerRefusal(new ProviderError('auth', 'provider returned 401: Incorrect API key sk-live-123', 401));
    expect(auth).toMatchObject({ status: 502, code: 'upstream_auth_error' });
    expect(auth.message).not.toContain('sk-live');
  });
});
