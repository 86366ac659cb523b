import { Decimal } from 'decimal.js';
import type { EntityManager } from 'typeorm';
import type { AttemptFinished } from '../../events/request-events.js';
import type { RecordedEvent } from '../../src/kernel/event-store/event-store.js';
import type { DurableProjection } from '../../src/kernel/projections/projection.js';
import { accrueSpend } from '../tenant-spend/accrue-spend.js';
import { TenantSpend } from '../tenant-spend/tenant-spend.entity.js';
import { CostLedgerEntry } from './cost-ledger-entry.entity.js';

/** An attempt is billable when it succeeded or the provider produced (and will charge for) tokens. */
export function isBillable(data: AttemptFinished['data']): boolean {
  return data.outcome === 'success' || data.usage.input + data.usage.output > 0 || new Decimal(data.cost.total).gt(0);
}

/**
 * The exactly-once cost ledger: one row per billable attempt, keyed (request_id, attempt), with tenant
 * spend derived from the rows actually inserted — all in the transaction that moves the checkpoint.
 * `ON CONFLICT DO NOTHING` is a second guard: a replayed event can never bill twice.
 */
export class CostLedgerProjection implements DurableProjection {
  readonly name = 'cost-ledger';
  readonly eventTypes = ['AttemptFinished'] as const;

  async handle(manager: EntityManager, events: readonly RecordedEvent[]): Promise<void> {
    const rows: Array<Partial<CostLedgerEntry>> = [];
    for (const event of events) {
      const data = event.data as AttemptFinished['data'];
      if (!isBillable(data)) continue;
      rows.push({
        requestId: data.requestId,
        attempt: data.attempt,
        tenantId: data.tenantId,
        keyId: data.keyId,
        alias: data.alias,
        deploymentId: data.deploymentId,
        providerId: data.providerId,
        model: data.model,
        inputTokens: data.usage.input,
        cachedInputTokens: data.usage.cachedInput,
        cacheWriteTokens: data.usage.cacheWrite,
        outputTokens: data.usage.output,
        reasoningTokens: data.usage.reasoning,
        costUsd: data.cost.total,
        priceVersion: data.priceVersion,
        outcome: data.outcome,
        usageEvidence: data.usageEvidence,
        globalPosition: String(event.globalPosition),
        recordedAt: event.recordedAt,
      });
    }
    for (let offset = 0; offset < rows.length; offset += 500) {
      const chunk = rows.slice(offset, offset + 500);
      const result = await manager
        .createQueryBuilder()
        .insert()
        .into(CostLedgerEntry)
        .values(chunk)
        .orIgnore()
        .returning('"request_id", "attempt"')
        .execute();
      const inserted = new Set((result.raw as Array<{ request_id: string; attempt: number }>).map((r) => `${r.request_id}#${r.attempt}`));
      await accrueSpend(
        manager,
        chunk
          .filter((row) => inserted.has(`${row.requestId}#${row.attempt}`))
          .map((row) => ({ tenantId: row.tenantId!, costUsd: row.costUsd!, recordedAt: row.recordedAt! })),
      );
    }
  }

  async reset(manager: EntityManager): Promise<void> {
    await manager.getRepository(CostLedgerEntry).clear();
    await manager.getRepository(TenantSpend).clear();
  }
}
