import type { ServerResponse } from 'node:http';
import type { RequestAdmitted } from '../../../events/index.js';
import { type BudgetReservation, type BudgetScope, type CostBasis, type ConcurrencyScope, type Permit, type RateReservation, type RateScope, permits } from '../../limits/index.js';
import { Decimal } from 'decimal.js';
import { estimatedCost } from '../routing/route-planner.js';
import type { Principal } from '../../../projections/key-index/index.js';
import type { ResolvedAlias, ResolvedDeployment } from '../../../projections/routing-snapshot/index.js';
import type { ParameterSupport, RoutePlan } from '../routing/route-planner.js';
import { observationOf, type RequestObservation } from '../../observability/index.js';
import { reservationForAlias } from './admission-estimate.js';
import { callableAlias } from './callable-alias.js';
import { noRouteError } from './client-errors.js';
import { GatewayError } from '../../canonical/index.js';
import { ContentGuard, ContentPolicyViolation, RemoteCheckUnavailable, type RequestContentPolicy } from '../../content-safety/index.js';
import { contentPolicyError, guardrailUnavailableError } from './content-policy-refusal.js';
import { moderationCaller } from './moderation-call.js';
import type { InferenceServices, PipelineSettings } from './inference-services.js';
import { type RequestHeaders, idempotencyKeyOf } from './request-headers.js';
import { RequestJournal } from './request-journal.js';
import { RequestLifetime } from './request-lifetime.js';
import { QuotaGroupCharges } from './quota-group-charges.js';
import { type CacheDecision, withCacheStatus } from './exact-cache-lookup.js';
import { concurrencyLeaseMs } from '../resilience/resilience-settings.js';

/** What an operation asks of admission, once its body is parsed and validated. */
export interface RequestIntent {
  operation: RequestAdmitted['data']['operation'];
  clientFormat: RequestAdmitted['data']['clientFormat'];
  /** The alias the client named. */
  model: string;
  stream: boolean;
  /** Capabilities a route must have. */
  needs: readonly string[];
  /** Input tokens reserved and recorded at admission. */
  estimatedInputTokens: number;
  /** Input tokens a route's context window must hold (embeddings: the longest single input). */
  contextInputTokens: number;
  /** Output tokens reserved and recorded at admission, for every choice (the planner's cost estimate uses it too). */
  reservedOutputTokens: number;
  /** Output tokens one choice may produce, for the context-window check; reservedOutputTokens when absent. */
  outputTokensPerChoice?: number;
  /** The client's parameter that caps output and whether it was sent (a budget refusal says how to reserve less); absent: output is not capped. */
  outputCap?: { parameter: string; sent: boolean };
  sessionId: string | null;
  honours?: ParameterSupport;
  /** The requested parameters a deployment accepts without sending them (hints its wire has no field for); none when absent. */
  unsent?: UnsentParameters;
  /** The client format's spelling of a parameter, for errors that name one. */
  parameterName?: (parameter: string) => string;
  /** What the request asked of a parameter, for a refusal that names it (the betas of `anthropic-beta`); null: not shown. */
  requestedValue?: (parameter: string) => string | null;
  adapterServes?: (deployment: ResolvedDeployment, capability: string) => boolean;
  /**
   * The input checks of the content policy in force for the request (chat: every place its content lives;
   * embeddings: its inputs), run after the limits and before the exact cache (DESIGN §6). Throws the guard's
   * ContentPolicyViolation on a block. Absent: the operation carries no content to check.
   */
  inspectContent?: (guard: ContentGuard) => Promise<void>;
}

/** What every admitted request carries, whoever answers it. */
interface AdmissionCommon {
  requestId: string;
  principal: Principal;
  alias: ResolvedAlias;
  journal: RequestJournal;
  lifetime: RequestLifetime;
  /** What the request reports to (metrics, traces, its log line); null when nobody observes. */
  observation: RequestObservation | null;
  /** The content policy at work on the request (output checks, placeholder recovery); null when none applies. */
  contentGuard: ContentGuard | null;
  /** Releases the admission permits and the request's timers; idempotent. */
  release(): void;
}

/** An admitted request the providers answer: its routes, and the quota groups its attempts are charged on. */
export interface RoutedRequest extends AdmissionCommon {
  answeredBy: 'providers';
  plan: RoutePlan;
  /** The requested parameters an attempt's deployment accepts without sending them: recorded with the attempt. */
  unsent: UnsentParameters;
  /** The deployment quota groups this request's attempts are charged on, as they go there. */
  quota: QuotaGroupCharges;
  /** What the exact cache decided: a miss keeps the answer for the next request. */
  cache: Exclude<CacheDecision, { status: 'hit' }>;
}

/** The parameters of the request a deployment accepts but has no wire field for (canonical names). */
export type UnsentParameters = (deployment: ResolvedDeployment) => readonly string[];

const NOTHING_UNSENT: UnsentParameters = () => [];

/** An admitted request the exact cache answers: no route was planned and no provider is called. */
export interface CachedRequest extends AdmissionCommon {
  answeredBy: 'cache';
  cache: Extract<CacheDecision, { status: 'hit' }>;
}

/** An admitted request: everything its answer needs, and the permits to release when it ends. */
export type AdmittedRequest = RoutedRequest | CachedRequest;

/**
 * The exact cache's decision for the alias a request is admitted on (chat only). The content policy in force is part
 * of the key: an answer kept under one version of a policy is never served under another.
 */
export type CacheLookup = (alias: ResolvedAlias, contentPolicy: RequestContentPolicy | null) => Promise<CacheDecision>;

export interface Exchange {
  requestId: string;
  headers: RequestHeaders;
  body: unknown;
  raw: ServerResponse;
}

/**
 * The refusals of a well-formed request that RequestRejected records: a limit (429), a budget (402),
 * no capacity or no available route (503). Bad input — an unknown alias, a parameter no route honours —
 * is the client's error and changes nothing, the log included.
 */
const RECORDED_REFUSALS: ReadonlySet<number> = new Set([402, 429, 503]);
const BYPASS: CacheDecision = Object.freeze({ status: 'bypass' });
const NOTHING_RESERVED = 0;

/**
 * The front half of every inference request, after authentication and body validation and in the
 * order of DESIGN §6: the alias on one routing snapshot (captured once: a reload never changes this
 * request), admission (concurrency permits, rate limits), the exact cache, then eligibility and
 * strategy and the budget reservation at the plan's price, then RequestAdmitted. A cache hit needs no
 * route: it is served while every provider is down, and its budget check reserves nothing (it costs
 * nothing) but still refuses once a hard budget is spent. A request that cannot be admitted gets its
 * GatewayError thrown (with everything released); a refused one (RECORDED_REFUSALS) also a RequestRejected.
 */
export async function admitRequest(services: InferenceServices, settings: PipelineSettings, exchange: Exchange, principal: Principal, intent: RequestIntent): Promise<RoutedRequest>;
export async function admitRequest(
  services: InferenceServices, settings: PipelineSettings, exchange: Exchange, principal: Principal, intent: RequestIntent, lookup: CacheLookup,
): Promise<AdmittedRequest>;
export async function admitRequest(
  services: InferenceServices,
  settings: PipelineSettings,
  exchange: Exchange,
  principal: Principal,
  intent: RequestIntent,
  lookup?: CacheLookup,
): Promise<AdmittedRequest> {
  const snapshot = services.routing.current;
  const observation = observationOf(exchange.raw);
  const journal = RequestJournal.forKey(services.committer, settings.durability, settings.nodeId, exchange.requestId, principal.keyId, observation);
  const lifetime = new RequestLifetime(exchange.raw, settings.resilience.deadlines.requestTimeoutMs);
  let permit: Permit | null = null;
  let rate: RateReservation | null = null;
  let budget: BudgetReservation | null = null;
  let cache: CacheDecision = BYPASS;
  let guard: ContentGuard | null = null;
  try {
    let alias = callableAlias(snapshot, principal, intent.model);
    // No more output reserved than the alias's largest route can produce (the routes are sent it capped likewise).
    intent = reservationForAlias(intent, alias);
    // Captured with the routing snapshot, once (a policy changed while the request runs does not change it), for the
    // alias the client named: its input is checked before the exact cache, before a budget downgrade can happen.
    const contentPolicy = intent.inspectContent ? snapshot.contentPolicyFor(principal.tenantId, principal.keyId, alias.name) : null;
    const local = await services.admission.admit(principal, intent.stream, lifetime.signal);
    permit = local;
    // Across nodes (Redis): the node's own count above can only be lower, so it never refuses first.
    // What the request holds across nodes (its concurrency leases, its budget reservation) is given back by
    // itself after the longest the request may live, should its node die before it ends.
    const holdMs = concurrencyLeaseMs(settings.resilience.deadlines);
    const shared = await services.concurrency.acquire(concurrencyScopes(principal), exchange.requestId, holdMs).catch((error: unknown) => {
      local.release();
      throw error;
    });
    permit = permits([local, shared]);
    rate = await services.rateLimits.reserve(rateScopes(principal, alias), {
      requests: 1, inputTokens: intent.estimatedInputTokens, outputTokens: intent.reservedOutputTokens,
    });
    // Set now, so every answer from here on (success, stream, or a later error) carries them.
    for (const [name, value] of Object.entries(rate.headers)) exchange.raw.setHeader(name, value);
    if (contentPolicy) {
      // A policy with a moderation check gets a caller bound to this request: its calls are requests of their own, on its tenant and key.
      const resources = contentPolicy.moderations
        ? { keys: services.content.keys, sessionVault: services.content.sessionVault, remote: services.content.remote, moderation: moderationCaller(services, settings, { requestId: exchange.requestId, principal, raw: exchange.raw }) }
        : services.content;
      guard = new ContentGuard(contentPolicy, { tenantId: principal.tenantId, requestId: exchange.requestId, sessionId: intent.sessionId }, resources);
      await intent.inspectContent!(guard);
    }
    const budgets = budgetScopes(principal);
    if (lookup) cache = await lookup(alias, contentPolicy);
    observation?.cacheDecided(cache.status);
    let plan: RoutePlan | null = null;
    if (cache.status === 'hit') {
      budget = await services.budgets.reserve(budgets, NOTHING_RESERVED, { holdMs, requestId: exchange.requestId }).catch((error: unknown) => {
        if (!isBudgetRefusal(error) || !alias.policy.budgetDowngrade) throw error;
        return null; // an alias with a downgrade target answers through the routes below instead
      });
      if (!budget) cache = BYPASS;
    }
    if (cache.status !== 'hit') {
      plan = planFor(services, exchange, principal, intent, alias);
      try {
        // The cost is only worked out for a request that has a budget to count against.
        const dearest = budgets.length ? dearestRoute(plan, intent) : null;
        budget = await services.budgets.reserve(budgets, dearest?.cost ?? 0, { holdMs, requestId: exchange.requestId, basis: dearest ? costBasis(intent, dearest.route) : undefined });
      } catch (error) {
        const target = alias.policy.budgetDowngrade ? snapshot.aliases.get(alias.policy.budgetDowngrade) : undefined;
        if (!isBudgetRefusal(error) || !target) throw error;
        // The alias serves what the budget refuses through its downgrade target, still counting its cost.
        // The downgraded answer is the target's, not the alias's: it is neither looked up nor kept.
        exchange.raw.setHeader('x-switchyard-budget-downgrade', `${alias.name}->${target.name}`);
        alias = target;
        cache = BYPASS;
        plan = planFor(services, exchange, principal, intent, alias);
        budget = await services.budgets.reserve(budgets, dearestRoute(plan, intent).cost, { enforce: false, holdMs, requestId: exchange.requestId });
      }
    }
    // The alias's own concurrency counts the alias that serves the request: after a budget downgrade,
    // the target's limit applies (its capacity is what the request takes), not the one the client named.
    // A cache hit holds it too, like every other permit.
    const aliasLimit = alias.policy.limits?.maxConcurrency;
    if (aliasLimit) {
      permit = permits([permit, services.admission.admitAlias(alias.name, aliasLimit)]);
      permit = permits([permit, await services.concurrency.acquire([{ kind: 'alias', id: alias.name, limit: aliasLimit }], exchange.requestId, holdMs)]);
    }
    await journal.admit({
      requestId: exchange.requestId,
      tenantId: principal.tenantId,
      keyId: principal.keyId,
      alias: alias.name,
      aliasVersion: alias.version,
      snapshotPosition: snapshot.version,
      clientFormat: intent.clientFormat,
      operation: intent.operation,
      stream: intent.stream,
      estimatedInputTokens: intent.estimatedInputTokens,
      reservedOutputTokens: intent.reservedOutputTokens,
      idempotencyKey: idempotencyKeyOf(exchange.headers),
      ...(guard ? { contentPolicy: guard.admitted() } : {}),
    });
    if (guard) observation?.contentFindings(guard.policyLabel, guard.inputCounts.lines());
    const held = permit;
    const reserved = rate;
    const committed = budget!;
    const quota = plan ? new QuotaGroupCharges(services.rateLimits, {
      requests: 1, inputTokens: intent.estimatedInputTokens, outputTokens: intent.reservedOutputTokens,
    }) : null;
    // The observation ends only once the request is settled, even when its client left earlier.
    observation?.hold();
    let released = false;
    const release = (): void => {
      // Once: every path that ends a request releases it, and a second call must not settle again.
      if (released) return;
      released = true;
      lifetime.dispose();
      held.release();
      // Settlement: the estimate becomes what the attempts actually used (zero when nothing was produced).
      const used = journal.usage();
      reserved.settle({ requests: 1, inputTokens: used.input, outputTokens: used.output });
      quota?.settle(journal.usageByDeployment());
      committed.settle(journal.cost());
      guard?.dispose();
      observation?.release();
    };
    // Two literals with the same leading keys, not `{ ...common, answeredBy, … }`: V8 11 (Node 20) gives an
    // object built as a spread followed by new keys a hidden class of its own, each time, and every step
    // that reads this object would then see a different shape per request (see eslint.config.js).
    const requestId = exchange.requestId;
    const contentGuard = guard;
    observation?.cacheDecided(cache.status); // a budget downgrade may have turned it into a bypass
    if (cache.status === 'hit') return { requestId, principal, alias, journal, lifetime, observation, contentGuard, release, answeredBy: 'cache', cache };
    return { requestId, principal, alias, journal, lifetime, observation, contentGuard, release, answeredBy: 'providers', plan: plan!, quota: quota!, cache, unsent: intent.unsent ?? NOTHING_UNSENT };
  } catch (thrown) {
    lifetime.dispose();
    // A block is the client's content: a 400 that RequestRejected records with what the input checks found.
    const blocked = thrown instanceof ContentPolicyViolation;
    // A fail-closed remote check without a verdict: a 503 that RequestRejected records like a block.
    const unchecked = thrown instanceof RemoteCheckUnavailable;
    const error = blocked ? contentPolicyError(thrown) : unchecked ? guardrailUnavailableError(thrown) : thrown;
    if ((blocked || unchecked) && guard) observation?.contentFindings(guard.policyLabel, guard.inputCounts.lines());
    guard?.dispose();
    permit?.release();
    rate?.cancel();
    budget?.cancel();
    if (!(error instanceof GatewayError)) throw error;
    if ((RECORDED_REFUSALS.has(error.status) || blocked) && !journal.isAdmitted) {
      await journal.reject({
        requestId: exchange.requestId,
        reason: error.message,
        status: error.status,
        code: error.code,
        tenantId: principal.tenantId,
        keyId: principal.keyId,
        alias: intent.model,
        operation: intent.operation,
        scope: typeof error.detail?.scope === 'string' ? error.detail.scope : null,
        ...((blocked || unchecked) && guard ? { contentPolicy: guard.admitted() } : {}),
      });
    }
    throw lookup && cache.status !== 'bypass' ? withCacheStatus(error, cache.status) : error;
  }
}

function isBudgetRefusal(error: unknown): boolean {
  return error instanceof GatewayError && error.code === 'budget_exceeded';
}


/** Eligibility and strategy on the captured snapshot; a plan without candidates is the caller's error. */
function planFor(services: InferenceServices, exchange: Exchange, principal: Principal, intent: RequestIntent, alias: ResolvedAlias): RoutePlan {
  const plan = services.planner.plan({
    alias,
    needs: intent.needs,
    estimatedInputTokens: intent.contextInputTokens,
    reservedOutputTokens: intent.reservedOutputTokens,
    outputTokensPerChoice: intent.outputTokensPerChoice,
    at: new Date(),
    stream: intent.stream,
    affinity: { principal: `${principal.tenantId}/${principal.keyId}`, sessionId: intent.sessionId, requestId: exchange.requestId },
    honours: intent.honours,
    adapterServes: intent.adapterServes,
  });
  if (plan.emptiedBy) {
    const demand = { inputTokens: intent.contextInputTokens, outputTokensPerChoice: intent.outputTokensPerChoice ?? intent.reservedOutputTokens };
    throw noRouteError(alias, plan, intent.parameterName, intent.requestedValue, demand);
  }
  return plan;
}

/** The most a request can cost: its estimate at the highest price among the routes it may take, and that route. */
function dearestRoute(plan: RoutePlan, intent: RequestIntent): { cost: Decimal; route: string | null } {
  let dearest: { cost: Decimal; route: string | null } = { cost: new Decimal(0), route: null };
  for (const candidate of plan.candidates) {
    const cost = estimatedCost(candidate.price, intent);
    if (dearest.route === null || cost.greaterThan(dearest.cost)) dearest = { cost, route: candidate.route };
  }
  return dearest;
}

/** What the budget reservation is made of, for a refusal to explain. */
function costBasis(intent: RequestIntent, route: string | null): CostBasis {
  return { inputTokens: intent.estimatedInputTokens, outputTokens: intent.reservedOutputTokens, route, outputCap: intent.outputCap ?? null };
}

/**
 * The scopes a request counts against whichever route serves it: its key, its tenant and the alias. A
 * deployment's quota group is charged by the attempts that go there (QuotaGroupCharges).
 */
function rateScopes(principal: Principal, alias: ResolvedAlias): RateScope[] {
  const scopes: RateScope[] = [
    { kind: 'key', id: principal.keyId, limits: principal.limits },
    { kind: 'tenant', id: principal.tenantId, limits: principal.tenant.limits },
  ];
  if (alias.policy.limits) scopes.push({ kind: 'alias', id: alias.name, limits: alias.policy.limits });
  return scopes;
}

/** The budgets a request counts against: its tenant's and its key's own (a moderation call its checked request's). */
export function budgetScopes(principal: Principal): BudgetScope[] {
  const scopes: BudgetScope[] = [];
  if (principal.tenant.budget) scopes.push({ kind: 'tenant', id: principal.tenantId, tenantId: principal.tenantId, budget: principal.tenant.budget });
  if (principal.budget) scopes.push({ kind: 'key', id: principal.keyId, tenantId: principal.tenantId, budget: principal.budget });
  return scopes;
}

/** The caller's concurrency limits shared across nodes: the key's and its tenant's `maxConcurrency` (the alias's is taken once the serving alias is final). */
function concurrencyScopes(principal: Principal): ConcurrencyScope[] {
  const scopes: ConcurrencyScope[] = [];
  if (principal.limits.maxConcurrency) scopes.push({ kind: 'key', id: principal.keyId, limit: principal.limits.maxConcurrency });
  if (principal.tenant.limits.maxConcurrency) scopes.push({ kind: 'tenant', id: principal.tenantId, limit: principal.tenant.limits.maxConcurrency });
  return scopes;
}
