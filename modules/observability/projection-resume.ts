import { comparePositions, type Database, type ProjectionRunner, projectionCheckpoints, projectionHalts } from '../../src/kernel/index.js';
import { type HaltView, haltView } from './projection-report.js';

/** How long a resume waits to see the projection get past its event, or halt at it again. */
export const RESUME_WAIT_MS = 30_000;

/**
 * What `POST /admin/v1/projections/{name}/resume` answers and `switchyard projections resume` prints:
 * `not-halted`; `moved-past` (the event is applied, the projection goes on); `halted-again` (the cause is
 * still there: `haltedAgain` says with what); `pending` (no process applied it within the wait: the one
 * holding its lease tries at its next poll — or none is running).
 */
export interface ResumeOutcome {
  projection: string;
  state: 'not-halted' | 'moved-past' | 'halted-again' | 'pending';
  halt: HaltView | null;
  haltedAgain: HaltView | null;
}

/**
 * Clears a durable projection's halt — in this process and in `projection_halts`, from which the process
 * that runs it, wherever that is, learns of it at its next poll — then watches the log's tables until the
 * projection's checkpoint passes the event, or a new halt is recorded, or `waitMs` has passed.
 */
export async function resumeProjection(
  { runner, database }: { runner: ProjectionRunner; database: Database },
  name: string,
  waitMs = RESUME_WAIT_MS,
): Promise<ResumeOutcome> {
  const halt = (await runner.halts()).find((candidate) => candidate.name === name) ?? null;
  if (!halt) return { projection: name, state: 'not-halted', halt: null, haltedAgain: null };
  await runner.resume(name);
  const deadline = Date.now() + waitMs;
  for (;;) {
    const again = await projectionHalts.load(database, name);
    if (again && again.haltedAt.getTime() > halt.haltedAt.getTime()) return { projection: name, state: 'halted-again', halt: haltView(halt), haltedAgain: haltView(again) };
    if (comparePositions(await projectionCheckpoints.load(database, name), halt.position) >= 0) {
      return { projection: name, state: 'moved-past', halt: haltView(halt), haltedAgain: null };
    }
    if (Date.now() > deadline) return { projection: name, state: 'pending', halt: haltView(halt), haltedAgain: null };
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The outcome in a sentence, and the exit status `projections resume` ends with. */
export function describeResume(outcome: ResumeOutcome): { text: string; code: number } {
  const { projection, halt, haltedAgain } = outcome;
  switch (outcome.state) {
    case 'not-halted':
      return { text: `${projection} is not halted: nothing to resume.`, code: 0 };
    case 'moved-past':
      return { text: `Resumed ${projection}: it applied the event at global position ${halt!.globalPosition} (${halt!.eventType}) and moves on.`, code: 0 };
    case 'halted-again':
      return {
        text: `${projection} halted again at global position ${haltedAgain!.globalPosition} (event ${haltedAgain!.eventId}, ${haltedAgain!.eventType}): ` +
          `${haltedAgain!.error}${haltedAgain!.errorCode ? ` [${haltedAgain!.errorCode}]` : ''}. The cause is still there: fix it, then resume again.`,
        code: 1,
      };
    case 'pending':
      return {
        text: `Cleared the halt of ${projection} at global position ${halt!.globalPosition}, but no process has applied that event within ` +
          `${RESUME_WAIT_MS / 1000} s: the process holding the projection's lease tries at its next poll. Is one running (serve or projector)?`,
        code: 1,
      };
  }
}
