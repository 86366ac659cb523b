import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Drops `request_summaries_status`: every page of the request-summaries projection writes it, and on the
 * embedded store that write is paid in the serving process (about 0.3 ms of a ~6 ms page of 150 requests;
 * the four per-filter indexes together about 2 ms), while request search does not need it. Status has
 * five values, so a status filter alone is answered by `request_summaries_recent` read backwards with the
 * status as a filter, stopping after the page's `limit` rows (at 200,000 requests, the console's scale
 * target: success reads ~60 index entries, failed ~1,000, cancelled at 0.5% ~10,000 in 2 ms); beside a
 * tenant, key or alias it filters that column's index. Its worst case is a status no row has, which reads
 * the whole table: 31 ms on PGlite and 23 ms on PostgreSQL at 200,000 requests (the budget is 1 s), growing
 * with the table. The tenant, key and alias indexes stay: their values are many, so without them a small
 * tenant's every page (a tenant admin's search is always confined to it) would read the whole table, and
 * on the embedded store that read holds the one session the appends wait for.
 */
export class RequestSummariesStatusIndex1764979200501 implements MigrationInterface {
  name = 'RequestSummariesStatusIndex1764979200501';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX IF EXISTS request_summaries_status`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`CREATE INDEX IF NOT EXISTS request_summaries_status ON request_summaries (status, at, request_id)`);
  }
}
