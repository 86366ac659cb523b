import { Inject, Injectable } from '@nestjs/common';
import { Decimal } from 'decimal.js';
import { type AliasPublished, aliasStream, priceStream, type Recorded, recorded, requestStream } from '../../events/index.js';
import { type Database, DATABASE, SqlEventStore } from '../../src/kernel/index.js';
import { aboutTenantSql } from './tenant-log-filter.js';

/** Request ids are UUIDv7 (the `x-request-id` header); anything else cannot name a request stream. */
export const REQUEST_ID = /^[0-9A-Za-z][0-9A-Za-z-]{0,63}$/;

interface LedgerRow {
  attempt: number;
  cost_usd: string;
  price_version: number;
  recorded_at: Date | string;
}

/**
 * `GET /admin/v1/requests/{id}` and `switchyard requests show`: one request reconstructed from its stream
 * — admission, every attempt (deployment, strategy, error, usage, cost), completion — with the alias
 * version and the price versions that were in force, and what the ledger billed.
 */
@Injectable()
export class RequestHistory {
  constructor(
    private readonly store: SqlEventStore,
    @Inject(DATABASE) private readonly database: Database,
  ) {}

  /** The request, or null when there is none — or, with `tenantId`, none of that tenant's (a tenant admin's read). */
  async show(requestId: string, tenantId?: string) {
    if (!REQUEST_ID.test(requestId)) return null;
    if (tenantId !== undefined && !(await this.isAbout(requestId, tenantId))) return null;
    const stored = await this.store.readStream(requestStream(requestId));
    if (stored.length === 0) return null;
    const events = recorded(stored);
    const admitted = events.find((e) => e.type === 'RequestAdmitted');
    const rejected = events.find((e) => e.type === 'RequestRejected');
    const completed = events.find((e) => e.type === 'RequestCompleted');
    const attempts = events.filter((e) => e.type === 'AttemptFinished');
    const cacheHit = events.find((e) => e.type === 'RequestServedFromCache');
    const ledger = await this.database.query<LedgerRow>(
      `SELECT attempt, cost_usd::text AS cost_usd, price_version, recorded_at FROM cost_ledger WHERE request_id = $1 ORDER BY attempt`,
      [requestId],
    );
    const billed = new Map(ledger.map((row) => [Number(row.attempt), row]));
    const prices = await this.prices(attempts.map((a) => ({ deploymentId: a.data.deploymentId, version: a.data.priceVersion })));
    return {
      requestId,
      status: completed?.data.status ?? (rejected ? 'rejected' : 'incomplete'),
      admission: admitted ? { ...admitted.data, at: admitted.recordedAt.toISOString(), globalPosition: admitted.globalPosition, metadata: admitted.metadata } : null,
      rejection: rejected ? { ...rejected.data, at: rejected.recordedAt.toISOString(), globalPosition: rejected.globalPosition } : null,
      alias: admitted ? await this.aliasVersion(admitted.data.alias, admitted.data.aliasVersion) : null,
      attempts: attempts.map((event) => {
        const data = event.data;
        const row = billed.get(data.attempt);
        return {
          attempt: data.attempt,
          at: event.recordedAt.toISOString(),
          globalPosition: event.globalPosition,
          deploymentId: data.deploymentId,
          providerId: data.providerId,
          model: data.model,
          strategy: data.routing?.strategy ?? null,
          candidates: data.routing?.candidates ?? [],
          routingReason: data.routing?.reason ?? null,
          outcome: data.outcome,
          errorClass: data.errorClass,
          httpStatus: data.httpStatus,
          deadline: data.deadline ?? null,
          usage: data.usage,
          usageEvidence: data.usageEvidence,
          // Why the provider's counts were not believed (usageEvidence `implausible`): reasons and short strings, never content.
          diagnostics: data.diagnostics ?? null,
          cost: data.cost,
          price: prices.get(`${data.deploymentId}#${data.priceVersion}`) ?? { version: data.priceVersion },
          latencyMs: data.latencyMs,
          ttftMs: data.ttftMs,
          providerRequestId: data.providerRequestId,
          ledger: row ? { costUsd: new Decimal(row.cost_usd).toFixed(12), recordedAt: new Date(row.recorded_at).toISOString() } : null,
        };
      }),
      cacheHit: cacheHit ? { ...cacheHit.data, at: cacheHit.recordedAt.toISOString(), globalPosition: cacheHit.globalPosition } : null,
      completion: completed ? { ...completed.data, at: completed.recordedAt.toISOString(), globalPosition: completed.globalPosition } : null,
      billing: {
        ledgerRows: ledger.length,
        costUsd: ledger.reduce((sum, row) => sum.plus(row.cost_usd), new Decimal(0)).toFixed(12),
      },
    };
  }

  /** Whether the request was sent with a key of the tenant: the rule the event history confines tenant admins by. */
  private async isAbout(requestId: string, tenantId: string): Promise<boolean> {
    const rows = await this.database.query<{ about: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM events e WHERE e.stream_id = $1 AND ${aboutTenantSql('e', '$2')}) AS about`,
      [requestStream(requestId), tenantId],
    );
    return rows[0]?.about === true;
  }

  /** The AliasPublished of the version the request was admitted under. */
  private async aliasVersion(alias: string, version: number) {
    const published = recorded(await this.store.readStream(aliasStream(alias))).find(
      (e): e is Recorded<AliasPublished> => e.type === 'AliasPublished' && e.data.version === version,
    );
    if (!published) return { name: alias, version };
    const { alias: name, ...rest } = published.data;
    return { name, ...rest, publishedAt: published.recordedAt.toISOString(), publishedBy: published.metadata.actor ?? null, globalPosition: published.globalPosition };
  }

  /** Price version = stream version of the deployment's PriceScheduled event. */
  private async prices(wanted: ReadonlyArray<{ deploymentId: string; version: number }>) {
    const result = new Map<string, Record<string, unknown>>();
    for (const deploymentId of new Set(wanted.map((w) => w.deploymentId))) {
      for (const event of recorded(await this.store.readStream(priceStream(deploymentId)))) {
        // A price stream holds PriceScheduled events only.
        if (event.type !== 'PriceScheduled') continue;
        if (!wanted.some((w) => w.deploymentId === deploymentId && w.version === event.streamVersion)) continue;
        const { deploymentId: _deployment, ...price } = event.data;
        result.set(`${deploymentId}#${event.streamVersion}`, { version: event.streamVersion, ...price, scheduledAt: event.recordedAt.toISOString(), scheduledBy: event.metadata.actor ?? null });
      }
    }
    return result;
  }
}
