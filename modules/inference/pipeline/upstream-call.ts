import type { ResolvedDeployment } from '../../../projections/routing-snapshot/index.js';
import type { EmbeddingsCall, UpstreamCall, UpstreamPools } from '../../providers/index.js';

export interface CallTimeouts {
  /** Most time to the response headers (buffered: the whole answer). */
  headersTimeoutMs: number;
  /** Most time between two body chunks. */
  idleTimeoutMs: number;
}

/**
 * The transport half of an upstream call (the deployment's pool, URL, deadlines and abort signal), shared
 * by every operation; the request and the bound on its answer's size are the operation's own.
 */
export type CallTransport = Omit<UpstreamCall, 'request' | 'maxAnswerBytes'> & Omit<EmbeddingsCall, 'request' | 'maxAnswerBytes'>;

/**
 * Everything but the request for one call to a deployment: its pooled connection and URL, the attempt's
 * abort signal and undici's own timeouts. Those timeouts are backstops only — the pipeline's deadline
 * timers fire first with their own typed errors.
 */
export async function callTransport(
  pools: UpstreamPools,
  deployment: ResolvedDeployment,
  signal: AbortSignal,
  timeouts: CallTimeouts,
  traceHeaders?: Record<string, string>,
): Promise<CallTransport> {
  const target = await pools.target(deployment);
  return { deployment, dispatcher: target.dispatcher, baseUrl: target.baseUrl, signal, ...timeouts, traceHeaders };
}
