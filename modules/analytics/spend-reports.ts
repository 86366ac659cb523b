import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { ClickHouseConnection } from '../../projections/clickhouse-analytics/index.js';
import { type Database, DATABASE } from '../../src/kernel/index.js';
import { ClickHouseSpendSource } from './clickhouse-spend-source.js';
import { PostgresSpendSource } from './postgres-spend-source.js';
import type { SpendQuery, SpendResult, SpendSource } from './spend-query.js';

export type SourceChoice = 'auto' | 'clickhouse' | 'postgres';

export class AnalyticsSourceError extends Error {
  override readonly name = 'AnalyticsSourceError';
  constructor(readonly status: 400 | 503, readonly code: string, message: string) {
    super(message);
  }
}

export interface SpendReport extends SpendResult {
  source: SpendSource['name'];
  /** Why PostgreSQL answered although ClickHouse is configured (auto only). */
  fallback: string | null;
}

const LEDGER = 'cost-ledger';
const ANALYTICS = 'clickhouse-analytics';

/**
 * Chooses where a spend report is computed. With ClickHouse configured, `auto` uses it when its
 * projection has read at least as far as the ledger (same answers to the cent); while it catches up (a
 * rebuild, an outage) or when it fails, PostgreSQL answers and the reply says so.
 */
@Injectable()
export class SpendReports {
  private readonly logger = new Logger('Analytics');
  private readonly postgres: PostgresSpendSource;
  private readonly clickhouse: ClickHouseSpendSource | null;

  constructor(
    @Inject(DATABASE) private readonly database: Database,
    @Optional() @Inject(ClickHouseConnection) connection: ClickHouseConnection | null,
  ) {
    this.postgres = new PostgresSpendSource(database);
    this.clickhouse = connection ? new ClickHouseSpendSource(connection) : null;
  }

  async report(query: SpendQuery, choice: SourceChoice): Promise<SpendReport> {
    if (choice === 'postgres') return { ...(await this.postgres.report(query)), source: 'postgres', fallback: null };
    if (!this.clickhouse) {
      if (choice === 'clickhouse') throw new AnalyticsSourceError(400, 'clickhouse_not_configured', 'ClickHouse is not configured (set CLICKHOUSE_URL); use source=postgres or auto.');
      return { ...(await this.postgres.report(query)), source: 'postgres', fallback: null };
    }
    if (choice === 'auto') {
      const lag = await this.clickhouseLag();
      if (lag) return { ...(await this.postgres.report(query)), source: 'postgres', fallback: lag };
    }
    try {
      return { ...(await this.clickhouse.report(query)), source: 'clickhouse', fallback: null };
    } catch (error) {
      if (choice === 'clickhouse') throw new AnalyticsSourceError(503, 'analytics_unavailable', 'ClickHouse did not answer; retry, or use source=postgres.');
      this.logger.warn(`ClickHouse failed (${(error as Error).message}); answering from PostgreSQL`);
      return { ...(await this.postgres.report(query)), source: 'postgres', fallback: 'ClickHouse did not answer' };
    }
  }

  /**
   * Null when ClickHouse has every attempt and cache hit the ledger has; otherwise why it cannot answer
   * yet. The two checkpoints are not compared directly: each also records the read horizon it stopped at,
   * which differs between readers that hold the same events. What matters is whether an AttemptFinished
   * or a RequestServedFromCache lies after ClickHouse's checkpoint and at or before the ledger's.
   */
  private async clickhouseLag(): Promise<string | null> {
    // One probe per type, each a range of the (event_type, transaction_id, global_position) index: asked with both
    // types at once, the planner read the whole log (0.8 s a report at 1,000,000 events: docs/benchmarks.md
    // "Console at scale"); this way it reads at most the one index entry it looks for.
    const rows = await this.database.query<{ behind: boolean }>(
      `WITH ledger AS (SELECT transaction_id, global_position FROM projection_checkpoints WHERE name = $1),
            analytics AS (SELECT coalesce((SELECT transaction_id FROM projection_checkpoints WHERE name = $2), '0'::xid8) AS transaction_id,
                                 coalesce((SELECT global_position FROM projection_checkpoints WHERE name = $2), 0) AS global_position)
       SELECT coalesce(bool_or(probe.found), false) AS behind
       FROM (VALUES ('AttemptFinished'), ('RequestServedFromCache')) AS billed(type) CROSS JOIN LATERAL (
         SELECT EXISTS (
           SELECT 1 FROM events e, ledger l, analytics a
           WHERE e.event_type = billed.type
             AND (e.transaction_id, e.global_position) > (a.transaction_id, a.global_position)
             AND (e.transaction_id, e.global_position) <= (l.transaction_id, l.global_position)
         ) AS found
       ) probe`,
      [LEDGER, ANALYTICS],
    );
    return rows[0]?.behind ? 'ClickHouse analytics is catching up with the ledger' : null;
  }
}
