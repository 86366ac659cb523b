import type { Mode } from '../load/sample.js';
import type { RequestSpec } from '../load/timed-request.js';
import type { PostgresBackends } from '../measure/postgres-backends.js';
import type { ProjectionLag } from '../measure/projection-lag.js';

export type TargetKind = 'direct' | 'bare' | 'portkey' | 'switchyard';

/** One thing the generator sends load to, running in its own process(es) against the shared mock. */
export interface Target {
  /** Report key: `direct`, `bare`, `portkey`, `switchyard:<variant>`. */
  id: string;
  kind: TargetKind;
  origin: string;
  /** Modes it is measured in (Portkey's streaming fails on Node 20: buffered only). */
  modes: Mode[];
  request(mode: Mode): RequestSpec;
  /** The SSE request of the slow-stream mode (Switchyard: an alias spread over several deployments). */
  streamsRequest(): RequestSpec;
  /** The processes whose CPU and memory are the target's (empty for the direct baseline). */
  processes(): number[];
  /** The PostgreSQL backends serving it, when it has a database. */
  postgres: PostgresBackends | null;
  /**
   * The `switchyard projector` processes that run its durable projections (-px variants): their CPU is
   * the target's, reported in a column of its own and added into the total.
   */
  projectorProcesses?(): number[];
  /** Where its durable projections stand against its log (Switchyard on PostgreSQL). */
  projections?: ProjectionLag;
  /** How it was started, for the report (settings, process count; never keys). */
  details: Record<string, unknown>;
  stop(): Promise<void>;
}

/**
 * Every process whose memory is the target's: the gateway's and, for a -px variant, its projector's. The
 * phase meter's peak sums the same set, so a report's RSS before, with all streams open and at the peak
 * compare like with like.
 */
export function footprint(target: Pick<Target, 'processes' | 'projectorProcesses'>): number[] {
  return [...target.processes(), ...(target.projectorProcesses?.() ?? [])];
}

export const CHAT_PATH = '/v1/chat/completions';

export function chatBody(model: string, mode: Mode): string {
  return JSON.stringify({ model, stream: mode === 'sse', messages: [{ role: 'user', content: 'benchmark prompt' }] });
}
