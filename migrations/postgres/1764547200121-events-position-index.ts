import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Users quote global positions (history APIs, `events list --after N`, audit export ranges, the request
 * a command appended): finding the event at one must not scan the log. Identity values only grow, so the
 * index is appended at its right edge.
 */
export class EventsPositionIndex1764547200121 implements MigrationInterface {
  name = 'EventsPositionIndex1764547200121';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`CREATE UNIQUE INDEX events_global_position ON events (global_position)`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP INDEX events_global_position`);
  }
}
