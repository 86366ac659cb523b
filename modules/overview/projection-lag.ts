import { checkpointOf, type Database, eventsAfter, type LogPosition, type ProjectionRunner, READ_HORIZON_SQL, START, xid8Param } from '../../src/kernel/index.js';

export interface ProjectionLag {
  name: string;
  /** Events of its types not applied yet (counting stops at the cap: more is "at least"). */
  lagEvents: number;
  /** Age of the oldest event it has not applied; 0 when caught up. */
  lagSeconds: number;
  status: 'ok' | 'behind' | 'failing' | 'halted';
}

/** Counting the backlog stops here: a lag this large is an incident, whatever its exact size. */
const LAG_CAP = 100_000;

/**
 * Every projection's lag as this node sees it: the runner's count of events after its position (bounded)
 * and, when it is behind, the age of the first of them (one indexed read of the log per lagging projection).
 */
export async function projectionLags(database: Database, runner: ProjectionRunner, now: Date): Promise<ProjectionLag[]> {
  const [lags, halts] = await Promise.all([runner.lag(LAG_CAP), runner.halts()]);
  const behind = new Map(lags.map((lag) => [lag.name, lag.behind]));
  const halted = new Set(halts.map((halt) => halt.name));
  const result: ProjectionLag[] = [];
  for (const status of runner.status()) {
    let position: LogPosition = status.position;
    let lagEvents = behind.get(status.name);
    if (lagEvents === undefined) {
      // A durable projection another process moves (it holds the lease): where its checkpoint stands.
      position = (await checkpointOf(database, status.name))?.position ?? START;
      lagEvents = await eventsAfter(database, position, status.eventTypes, LAG_CAP);
    }
    let lagSeconds = 0;
    if (lagEvents > 0) {
      const typed = status.eventTypes !== 'all';
      const [first] = await database.query<{ recorded_at: Date | string }>(
        `SELECT recorded_at FROM events
         WHERE (transaction_id, global_position) > ($1::text::xid8, $2::bigint) AND transaction_id < ${READ_HORIZON_SQL}
           ${typed ? 'AND event_type = ANY($3::text[])' : ''}
         ORDER BY transaction_id, global_position LIMIT 1`,
        typed ? [xid8Param(position.transactionId), position.globalPosition, status.eventTypes] : [xid8Param(position.transactionId), position.globalPosition],
      );
      if (first) lagSeconds = Math.max(0, Math.round((now.getTime() - new Date(first.recorded_at).getTime()) / 100) / 10);
    }
    const state = halted.has(status.name) || status.halted ? 'halted' : status.lastError !== null ? 'failing' : lagEvents > 0 ? 'behind' : 'ok';
    result.push({ name: status.name, lagEvents, lagSeconds, status: state });
  }
  return result;
}
