import type { ServerResponse } from 'node:http';
import type { RequestAdmitted } from '../../../events/index.js';
import type { Permit } from '../../limits/index.js';
import type { Principal } from '../../../projections/key-index/principal.js';
import type { ResolvedAlias, ResolvedDeployment } from '../../../projections/routing-snapshot/routing-snapshot.js';
import type { ParameterSupport, RoutePlan } from '../routing/route-planner.js';
import { observationOf, type RequestObservation } from '../../observability/index.js';
import { callableAlias } from './callable-alias.js';
import { noRouteError } from './client-errors.js';
import type { InferenceServices, PipelineSettings } from './inference-services.js';
import { type RequestHeaders, idempotencyKeyOf } from './request-headers.js';
import { RequestJournal } from './request-journal.js';
import { RequestLifetime } from './request-lifetime.js';

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
  /** Output tokens reserved and recorded at admission (the same number the planner checks). */
  reservedOutputTokens: number;
  sessionId: string | null;
  honours?: ParameterSupport;
  adapterServes?: (deployment: ResolvedDeployment, capability: string) => boolean;
}

/** An admitted request: everything the attempts need, and the permits to release when it ends. */
export interface AdmittedRequest {
  requestId: string;
  principal: Principal;
  alias: ResolvedAlias;
  plan: RoutePlan;
  journal: RequestJournal;
  lifetime: RequestLifetime;
  /** What the request reports to (metrics, traces, its log line); null when nobody observes. */
  observation: RequestObservation | null;
  /** Releases the admission permits and the request's timers; idempotent. */
  release(): void;
}

export interface Exchange {
  requestId: string;
  headers: RequestHeaders;
  body: unknown;
  raw: ServerResponse;
}

/**
 * The front half of every inference request, after authentication and body validation and in the
 * order of DESIGN §6: the alias on one routing snapshot (captured once: a reload never changes this
 * request), admission permits, eligibility and strategy, then RequestAdmitted. Throws a GatewayError
 * (with everything released) when the request cannot be admitted; nothing has been written then.
 */
export async function admitRequest(
  services: InferenceServices,
  settings: PipelineSettings,
  exchange: Exchange,
  principal: Principal,
  intent: RequestIntent,
): Promise<AdmittedRequest> {
  const snapshot = services.routing.current;
  const alias = callableAlias(snapshot, principal, intent.model);
  const lifetime = new RequestLifetime(exchange.raw, settings.resilience.deadlines.requestTimeoutMs);
  let permit: Permit | null = null;
  try {
    permit = await services.admission.admit(principal, intent.stream, lifetime.signal);
    const plan = services.planner.plan({
      alias,
      needs: intent.needs,
      estimatedInputTokens: intent.contextInputTokens,
      reservedOutputTokens: intent.reservedOutputTokens,
      at: new Date(),
      stream: intent.stream,
      affinity: { principal: `${principal.tenantId}/${principal.keyId}`, sessionId: intent.sessionId, requestId: exchange.requestId },
      honours: intent.honours,
      adapterServes: intent.adapterServes,
    });
    if (plan.emptiedBy) throw noRouteError(alias, plan);
    const observation = observationOf(exchange.raw);
    const journal = RequestJournal.forKey(services.committer, settings.durability, settings.nodeId, exchange.requestId, principal.keyId, observation);
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
    });
    const held = permit;
    // The observation ends only once the request is settled, even when its client left earlier.
    observation?.hold();
    let released = false;
    return {
      requestId: exchange.requestId, principal, alias, plan, journal, lifetime, observation,
      release: () => {
        lifetime.dispose();
        held.release();
        if (!released) observation?.release();
        released = true;
      },
    };
  } catch (error) {
    lifetime.dispose();
    permit?.release();
    throw error;
  }
}
