import { Logger } from '@nestjs/common';
import type { ResolvedAlias } from '../../../projections/routing-snapshot/index.js';
import { StoreOutageLog } from '../../cache/index.js';
import { type CacheEntryKey, type ExactCache, exactCacheDigest } from '../../cache/index.js';
import type { StoredAnswer } from '../../cache/index.js';
import type { ChatRequest, GatewayError } from '../../canonical/index.js';
import type { ChatResponse } from '../../canonical/index.js';
import { firstHeader } from '../../canonical/index.js';
import type { RequestHeaders } from './request-headers.js';
import type { RequestContentPolicy } from '../../content-safety/index.js';

export interface ExactCacheSettings {
  enabled: boolean;
  ttlMs: number;
}

/** What the exact cache decided for one request; `status` is the `x-switchyard-cache` header. */
export type CacheDecision =
  | { status: 'bypass' }
  | { status: 'miss'; key: CacheEntryKey }
  | { status: 'hit'; key: CacheEntryKey; answer: StoredAnswer };

/**
 * The exact-cache part of the pipeline, after admission and before dispatch: the key is the tenant's
 * partition, the alias and a digest of the alias version and the normalized request. Bypassed when the
 * node, the alias (`policy.cache: false`) or the request (`cache-control: no-cache` / `no-store`) says
 * so. Only complete answers are stored (every choice ended with `stop` or `tool_calls`): errors and
 * truncated answers (`length`, `content_filter`, a cut or cancelled stream) never are. An unreachable
 * store is a miss (logged), never a failed request.
 */
export class ExactCacheLookup {
  private static readonly logger = new Logger('ExactCache');
  private readonly outage = new StoreOutageLog(ExactCacheLookup.logger, 'exact cache');

  constructor(
    private readonly cache: ExactCache,
    private readonly settings: ExactCacheSettings,
  ) {}

  async decide(tenantId: string, alias: ResolvedAlias, request: ChatRequest, headers: RequestHeaders, contentPolicy: RequestContentPolicy | null = null): Promise<CacheDecision> {
    if (!this.settings.enabled || alias.policy.cache === false || refusesCache(headers)) return { status: 'bypass' };
    // A policy that tokenizes keeps the values it protects in the request's memory (or sealed in its session):
    // the answer the client receives has them back, so storing it would put them in the cache (Redis) in clear.
    if (contentPolicy && tokenizes(contentPolicy.definition)) return { status: 'bypass' };
    // Under a content policy the key names its versions: an answer checked under one version is not served under another.
    const policies = contentPolicy ? contentPolicy.applied.sources.map((source) => `${source.attachedTo}:${source.policyId}@${source.version}`) : undefined;
    const key = { tenantId, alias: alias.name, digest: exactCacheDigest(alias.version, request, policies) };
    try {
      const answer = await this.cache.get(key);
      return answer ? { status: 'hit', key, answer } : { status: 'miss', key };
    } catch (error) {
      this.outage.failed(error);
      return { status: 'miss', key };
    }
  }

  /**
   * Stores a provider's answer after a miss, if it is complete. The pipeline awaits it before the
   * answer's last byte, so a repeat sent the moment the answer arrived already hits; never rejects.
   */
  async remember(decision: CacheDecision, answer: StoredAnswer): Promise<void> {
    if (decision.status !== 'miss' || !isComplete(answer.response)) return;
    await this.cache.put(decision.key, answer, this.settings.ttlMs).catch((error) => this.outage.failed(error));
  }
}

function tokenizes(definition: RequestContentPolicy['definition']): boolean {
  const rules = definition.input as Record<string, unknown>;
  for (const [name, rule] of Object.entries(rules)) {
    if (rule === 'tokenize') return true;
    if (name === 'custom' && Array.isArray(rule) && rule.some((custom: { action?: string }) => custom.action === 'tokenize')) return true;
    if (name === 'deny_terms' && (rule as { action?: string } | undefined)?.action === 'tokenize') return true;
  }
  return false;
}

function refusesCache(headers: RequestHeaders): boolean {
  const value = firstHeader(headers['cache-control']);
  return value !== undefined && /(^|[\s,])no-(cache|store)([\s,;=]|$)/i.test(value);
}

function isComplete(response: ChatResponse): boolean {
  return response.choices.length > 0 && response.choices.every((c) => c.stopReason === 'stop' || c.stopReason === 'tool_calls');
}

/** The same error, answered with the cache's decision too (a copy: an error object may be shared). */
export function withCacheStatus(error: GatewayError, status: CacheDecision['status']): GatewayError {
  return error.withHeaders({ 'x-switchyard-cache': status });
}
