import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { ClickHouseConnection } from '../../projections/clickhouse-analytics/clickhouse-connection.js';
import type { Database } from '../../src/kernel/database/database.js';
import { type LogPosition, comparePositions } from '../../src/kernel/event-store/event-store.js';
import { DATABASE } from '../../src/platform.module.js';
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

  /** Null when ClickHouse has everything the ledger has; otherwise why it cannot answer yet. */
  private async clickhouseLag(): Promise<string | null> {
    const rows = await this.database.query<{ name: string; transaction_id: string; global_position: string }>(
      `SELECT name, transaction_id::text AS transaction_id, global_position::text AS global_position
       FROM projection_checkpoints WHERE name = ANY($1::text[])`,
      [[LEDGER, ANALYTICS]],
    );
    const position = (name: string): LogPosition | null => {
      const row = rows.find((r) => r.name === name);
      return row ? { transactionId: row.transaction_id, globalPosition: Number(row.global_position) } : null;
    };
    const ledger = position(LEDGER);
    const analytics = position(ANALYTICS);
    if (!ledger) return null;
    if (!analytics || comparePositions(analytics, ledger) < 0) return 'ClickHouse analytics is catching up with the ledger';
    return null;
  }
}
