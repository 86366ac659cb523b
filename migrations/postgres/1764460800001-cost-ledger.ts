import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Read models for money (DESIGN §5): one ledger row per billable attempt; spend per tenant and period. */
export class CostLedger1764460800001 implements MigrationInterface {
  name = 'CostLedger1764460800001';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE cost_ledger (
        request_id          text NOT NULL,
        attempt             integer NOT NULL,
        tenant_id           text NOT NULL,
        key_id              text NOT NULL,
        alias               text NOT NULL,
        deployment_id       text NOT NULL,
        provider_id         text NOT NULL,
        model               text NOT NULL,
        input_tokens        integer NOT NULL,
        cached_input_tokens integer NOT NULL,
        cache_write_tokens  integer NOT NULL,
        output_tokens       integer NOT NULL,
        reasoning_tokens    integer NOT NULL,
        cost_usd            numeric(24, 12) NOT NULL,
        price_version       integer NOT NULL,
        outcome             text NOT NULL,
        usage_evidence      text NOT NULL,
        global_position     bigint NOT NULL,
        recorded_at         timestamptz NOT NULL,
        PRIMARY KEY (request_id, attempt)
      )`);
    await runner.query(`CREATE INDEX cost_ledger_tenant_time ON cost_ledger (tenant_id, recorded_at)`);
    await runner.query(`
      CREATE TABLE tenant_spend (
        tenant_id    text NOT NULL,
        period       text NOT NULL CHECK (period IN ('day', 'month')),
        period_start timestamptz NOT NULL,
        spent_usd    numeric(24, 12) NOT NULL,
        PRIMARY KEY (tenant_id, period, period_start)
      )`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE tenant_spend`);
    await runner.query(`DROP TABLE cost_ledger`);
  }
}
