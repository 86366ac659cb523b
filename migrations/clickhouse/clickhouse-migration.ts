/**
 * One ClickHouse schema step. Statements use `{db}` for the database named by CLICKHOUSE_URL and must be
 * idempotent (IF NOT EXISTS): ClickHouse has no transactional DDL, so a step interrupted half-way is
 * simply run again, and two nodes starting together may both run it.
 */
export interface ClickHouseMigration {
  version: number;
  name: string;
  statements: readonly string[];
}
