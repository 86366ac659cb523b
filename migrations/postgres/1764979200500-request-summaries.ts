import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `request_summaries`: one row per request, the read model of request search (`GET /admin/v1/requests`,
 * `switchyard requests list`) and of the overview's live window. Pages are newest first, keyed by
 * (at, request_id): each filter has an index that starts with it and ends with that key, so a page is one
 * backward range scan that stops after `limit` rows, however deep the page and however large the table.
 * Token counts are numeric, not bigint: a summary shows what the events say, and a count no bigint holds (a
 * provider's 1e308, which halts the ledger) must not stop request search too.
 * A new projection starts at position 0: the runner fills it from the whole log after this migration.
 */
export class RequestSummaries1764979200500 implements MigrationInterface {
  name = 'RequestSummaries1764979200500';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE TABLE request_summaries (
        request_id      text PRIMARY KEY,
        at              timestamptz NOT NULL,
        global_position bigint NOT NULL,
        tenant_id       text,
        key_id          text,
        alias           text,
        operation       text,
        status          text NOT NULL,
        http_status     integer,
        error_code      text,
        attempts        integer NOT NULL,
        latency_ms      integer,
        input_tokens    numeric NOT NULL,
        output_tokens   numeric NOT NULL,
        cost_usd        numeric(38, 12) NOT NULL,
        cache_hit       boolean NOT NULL
      )`);
    await runner.query(`CREATE INDEX request_summaries_recent ON request_summaries (at, request_id)`);
    for (const column of ['tenant_id', 'key_id', 'alias', 'status']) {
      await runner.query(`CREATE INDEX request_summaries_${column} ON request_summaries (${column}, at, request_id)`);
    }
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE request_summaries`);
  }
}
