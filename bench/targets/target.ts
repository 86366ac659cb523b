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
  /** A -relay variant's broker when it runs on this machine: metered apart, not the target's CPU. */
  brokerProcesses?(): number[];
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

/** The prompt of every request of a run, the same for every target (set once by the runner: --prompt-bytes). */
let benchPrompt = 'benchmark prompt';

/**
 * Makes the run's prompt `bytes` long (0: the short default): prose in which about one sentence in four carries
 * personal data (emails, phone numbers, a card, an IBAN, an IP address), which a `-pii` variant's detectors find.
 */
export function useBenchPrompt(bytes: number): void {
  if (bytes === 0) return;
  const sentences = [
    'The quarterly review covered shipping delays, warehouse capacity and the new returns process in some detail. ',
    'Customer Ada Lovelace (ada.lovelace@example.com, +44 20 7946 0958) asked whether her order could ship on Friday. ',
    'Several teams reported that the dashboard loads slowly in the afternoon, when most of the reports are generated. ',
    'Please summarise the open questions and propose two options for each, with their costs and the risks involved. ',
    'Refunds go to card 4111 1111 1111 1111 or to account GB82 WEST 1234 5698 7654 32; the gateway at 10.20.30.40 logs each. ',
    'The meeting notes mention a pilot in two regions, a training plan for support staff and a budget review in March. ',
    'Grace Hopper <grace.hopper@example.org> will join the call from New York; her number is +1 212 555 0147. ',
    'Keep the answer short: a list of actions with an owner and a date for each, and nothing else in the reply. ',
  ];
  let prompt = '';
  for (let i = 0; prompt.length < bytes; i++) prompt += sentences[i % sentences.length];
  benchPrompt = prompt.slice(0, bytes);
}

export function chatBody(model: string, mode: Mode): string {
  return JSON.stringify({ model, stream: mode === 'sse', messages: [{ role: 'user', content: benchPrompt }] });
}
