import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { RequestAdmitted } from '../../events/index.js';
import type { RoutedRequest } from '../../modules/inference/pipeline/request-admission.js';
import { RequestJournal } from '../../modules/inference/pipeline/request-journal.js';
import { RequestLifetime } from '../../modules/inference/pipeline/request-lifetime.js';
import type { DurabilityProfile } from '../../modules/inference/pipeline/durability.js';
import type { Principal } from '../../projections/key-index/principal.js';
import type { ResolvedAlias } from '../../projections/routing-snapshot/routing-snapshot.js';
import type { AppendRequest, AppendResult, GroupCommitter } from '../../src/kernel/index.js';
import { testCandidates } from './routing-fixtures.js';

/** A key of tenant `acme` with no limits, allowed `aliases` (null: every alias). */
export function testPrincipal(aliases: string[] | null = null): Principal {
  return {
    keyId: 'key-1', prefix: 'sk-sy-xx', tenantId: 'acme', scopes: new Set(['inference']), aliases: aliases && new Set(aliases), expiresAt: null, budget: null,
    limits: { rpm: null, tpm: null, maxConcurrency: null },
    tenant: { status: 'active', limits: { rpm: null, tpm: null, maxConcurrency: null }, budget: null },
  };
}

/**
 * A committer that keeps every append it is given, in order, and answers each as `outcome` says at the
 * time: committed, or failed with that error. Nothing is stored anywhere.
 */
export class StubCommitter {
  readonly appends: AppendRequest[] = [];
  outcome: Error | null = null;

  append(request: AppendRequest): Promise<AppendResult> {
    this.appends.push(request);
    if (this.outcome) return Promise.reject(this.outcome);
    return Promise.resolve({ nextExpectedVersion: request.events.length } as AppendResult);
  }

  /** The event types of each append, in order. */
  get types(): string[][] {
    return this.appends.map((append) => append.events.map((event) => event.type));
  }

  get asCommitter(): GroupCommitter {
    return this as unknown as GroupCommitter;
  }
}

/** Just what the pipeline parts use of a ServerResponse: 'close', `destroyed`, `writableFinished` and one buffered answer. */
export class FakeResponse extends EventEmitter {
  destroyed = false;
  writableFinished = false;
  status: number | null = null;
  headers: Record<string, unknown> = {};
  body: string | null = null;
  /** Headers set one by one before the answer (`setHeader`), as admission sets the rate-limit ones. */
  preset: Record<string, unknown> = {};

  setHeader(name: string, value: unknown): this {
    this.preset[name] = value;
    return this;
  }

  writeHead(status: number, headers: Record<string, unknown>): this {
    this.status = status;
    this.headers = headers;
    return this;
  }

  end(body: string): this {
    this.body = body;
    this.writableFinished = true;
    return this;
  }

  /** The client went away before the answer, as Node reports it. */
  hangUp(): void {
    this.destroyed = true;
    this.emit('close');
  }

  get asRaw(): ServerResponse {
    return this as unknown as ServerResponse;
  }
}

export function admittedData(requestId: string): RequestAdmitted['data'] {
  return {
    requestId, tenantId: 'acme', keyId: 'key-1', alias: 'chat', aliasVersion: 1, snapshotPosition: 1,
    clientFormat: 'openai', operation: 'chat', stream: false, estimatedInputTokens: 10, reservedOutputTokens: 20, idempotencyKey: null,
  };
}

/**
 * An admitted request on `alias` (its routes the plan, in order) with a real journal over `committer`
 * and a real lifetime over `raw`, as admission hands it to the attempts. Quota groups charge nothing.
 */
export async function testRoutedRequest(
  alias: ResolvedAlias,
  options: { committer?: StubCommitter; raw?: FakeResponse; profile?: DurabilityProfile; requestTimeoutMs?: number } = {},
): Promise<RoutedRequest> {
  const requestId = 'req-1';
  const journal = RequestJournal.forKey((options.committer ?? new StubCommitter()).asCommitter, options.profile ?? 'default', 'node-1', requestId, 'key-1');
  await journal.admit(admittedData(requestId));
  const lifetime = new RequestLifetime((options.raw ?? new FakeResponse()).asRaw, options.requestTimeoutMs ?? 60_000);
  return {
    answeredBy: 'providers',
    requestId,
    principal: testPrincipal(),
    alias,
    journal,
    lifetime,
    observation: null,
    contentGuard: null,
    plan: { candidates: testCandidates(alias), skipped: [], reason: 'priority', emptiedBy: null },
    quota: { enter: async () => null } as unknown as RoutedRequest['quota'],
    cache: { status: 'bypass' },
    unsent: () => [],
    release: () => lifetime.dispose(),
  };
}
