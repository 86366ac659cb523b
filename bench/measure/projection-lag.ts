import pg from 'pg';
import { AuditChainProjection } from '../../projections/audit-chain/audit-chain.projection.js';
import { CostLedgerProjection } from '../../projections/cost-ledger/cost-ledger.projection.js';
import { ALL_EVENT_TYPES, type DurableProjection } from '../../src/kernel/index.js';

/**
 * The durable projections of every bench run, with the event types each follows (the bench passes no
 * CLICKHOUSE_URL, so there is no analytics projection).
 */
const FOLLOWED = ([new CostLedgerProjection(), new AuditChainProjection(null, 0)] as DurableProjection[]).map((projection) => ({
  name: projection.name,
  types: projection.eventTypes === ALL_EVENT_TYPES ? null : [...projection.eventTypes],
}));

export interface CatchUp {
  /** Events the durable projections had not applied when the wait began (summed over projections). */
  behindAtStart: number;
  /** How long until none was behind; null when that did not happen within the wait. */
  caughtUpMs: number | null;
  /** Still behind at the end of the wait (0 when caught up). */
  behindAtEnd: number;
}

const POLL_MS = 100;

/**
 * How far the durable projections (ledger, spend, audit chain) are behind the run's event log, read
 * from the log and `projection_checkpoints` of the run's own database — wherever the projections run
 * (in the gateway or a `switchyard projector`). A phase whose CPU is charged to its requests is not over
 * until the projections have applied its events. The connection is the bench's: its backend is left
 * out of the PostgreSQL CPU (`pid`).
 */
export class ProjectionLag {
  private constructor(
    private readonly client: pg.Client,
    readonly pid: number,
  ) {}

  static async open(databaseUrl: string): Promise<ProjectionLag> {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    const own = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
    return new ProjectionLag(client, own.rows[0].pid);
  }

  /** Events of their types after each projection's checkpoint, summed (a projection without one counts from the start). */
  async behind(): Promise<number> {
    let sum = 0;
    for (const projection of FOLLOWED) {
      const result = await this.client.query<{ n: string }>(
        `WITH c AS (SELECT coalesce((SELECT transaction_id FROM projection_checkpoints WHERE name = $1), '0'::xid8) AS x,
                           coalesce((SELECT global_position FROM projection_checkpoints WHERE name = $1), 0) AS g)
         SELECT count(*)::text AS n FROM c, events e
         WHERE (e.transaction_id, e.global_position) > (c.x, c.g) AND ($2::text[] IS NULL OR e.event_type = ANY($2::text[]))`,
        [projection.name, projection.types],
      );
      sum += Number(result.rows[0].n);
    }
    return sum;
  }

  /** Polls until no projection is behind, or `timeoutMs` passes. */
  async waitCaughtUp(timeoutMs: number): Promise<CatchUp> {
    const started = performance.now();
    const behindAtStart = await this.behind();
    let behind = behindAtStart;
    while (behind > 0 && performance.now() - started < timeoutMs) {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      behind = await this.behind();
    }
    return { behindAtStart, caughtUpMs: behind === 0 ? Math.round(performance.now() - started) : null, behindAtEnd: behind };
  }

  async close(): Promise<void> {
    await this.client.end();
  }
}
