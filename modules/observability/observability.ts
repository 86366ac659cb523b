import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';
import { RequestScoped, redactText } from '../../src/kernel/index.js';
import { GatewayMetrics } from './gateway-metrics.js';
import { GatewayTracing } from './gateway-tracing.js';
import type { ObservabilitySettings } from './observability-settings.js';
import { RequestLog } from './request-log.js';
import { type ObservationSinks, RequestObservation } from './request-observation.js';

/** The response header that tells a client how much of its latency was the gateway's own. */
export const OVERHEAD_HEADER = 'x-switchyard-overhead-ms';

const observations = new RequestScoped<ServerResponse, RequestObservation>('switchyard.observation');

/**
 * The observation of the request a response belongs to; null for a response nobody observes (a
 * pipeline driven without the HTTP server, as unit tests do).
 */
export function observationOf(raw: ServerResponse): RequestObservation | null {
  return observations.get(raw) ?? null;
}

/**
 * Metrics, traces and the request log of one gateway process. `track` runs first on every request
 * (a Fastify onRequest hook), so refusals (401, 429, 400, 404) are observed like answers.
 */
export class Observability {
  readonly metrics = new GatewayMetrics();
  readonly tracing: GatewayTracing;
  private readonly log: RequestLog | null;
  private readonly open = new Set<RequestObservation>();
  private readonly openResponses = new Map<RequestObservation, ServerResponse>();
  private idleWaiters: Array<() => void> = [];
  private readonly closers: Array<() => void> = [];
  private spoolDepth: () => number = () => 0;
  /** What every request's observation reports to: one object for all of them. */
  private readonly sinks: ObservationSinks;

  constructor(
    readonly settings: ObservabilitySettings,
    logLevel: 'error' | 'warn' | 'log' | 'debug' = 'log',
    logDestination?: { write(line: string): void },
  ) {
    this.tracing = new GatewayTracing(settings);
    // Successes are `info` lines, refusals `warn`, failures `error`: LOG_LEVEL=warn keeps only the problems.
    this.log = settings.requestLog ? new RequestLog(logLevel === 'log' ? 'info' : logLevel, logDestination) : null;
    this.sinks = {
      metrics: this.metrics,
      tracing: this.tracing,
      log: (line) => this.log?.write(line),
      contentLogTenants: settings.contentLogTenants,
      ended: (ended) => this.settle(ended),
    };
  }

  readonly track = (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    const raw = reply.raw;
    const query = request.url.indexOf('?');
    const path = query < 0 ? request.url : request.url.slice(0, query);
    const operation = operationOf(path);
    // An unknown path is the client's text: it is logged redacted and never becomes a label.
    const loggedPath = operation === 'other' ? redactText(path, 200) : path;
    const server = this.tracing.startServerSpan(`${request.method} ${operation === 'other' ? 'request' : path}`, request.headers, {
      'http.request.method': request.method,
      'url.path': operation === 'other' ? '' : path,
      'switchyard.request_id': request.id,
    });
    const observation = new RequestObservation(this.sinks, request.id, request.method, loggedPath, operation, server, () => (raw.headersSent ? raw.statusCode : 499));
    observations.set(raw, observation);
    this.open.add(observation);
    this.openResponses.set(observation, raw);
    // Every response's headers pass through writeHead (an implicit header too), whatever wrote them:
    // the one place the overhead header can be added for all of them.
    const writeHead = raw.writeHead;
    raw.writeHead = function (this: ServerResponse, ...args: unknown[]) {
      if (!this.headersSent) this.setHeader(OVERHEAD_HEADER, String(observation.headersOut()));
      return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
    } as ServerResponse['writeHead'];
    raw.once('close', () => observation.responseClosed());
    done();
  };

  /** Requests whose response is still open or whose settlement is still running. */
  get inFlight(): number {
    return this.open.size;
  }

  /** Resolves when no request is in flight, or after `deadlineMs`; says which. */
  async waitForIdle(deadlineMs: number): Promise<boolean> {
    if (this.open.size === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    const idle = new Promise<boolean>((resolve) => this.idleWaiters.push(() => resolve(true)));
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), deadlineMs)));
    try {
      return await Promise.race([idle, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Ends the responses still open (past the shutdown deadline): each request's lifetime sees its client
   * go, cancels its upstream call and settles what was produced.
   */
  cutInFlight(): number {
    let cut = 0;
    for (const [observation, raw] of this.openResponses) {
      if (observation.isEnded || raw.destroyed) continue;
      raw.destroy();
      cut++;
    }
    return cut;
  }

  /**
   * Where `switchyard_event_spool_bytes` reads the event-store outage spool's size; 0 until a spool
   * registers itself here.
   */
  readSpoolDepthFrom(read: () => number): void {
    this.spoolDepth = read;
  }

  spoolBytes(): number {
    return this.spoolDepth();
  }

  onClose(closer: () => void): void {
    this.closers.push(closer);
  }

  async close(): Promise<void> {
    for (const closer of this.closers.splice(0)) closer();
    this.log?.flush();
    await this.tracing.close();
  }

  private settle(observation: RequestObservation): void {
    this.open.delete(observation);
    this.openResponses.delete(observation);
    if (this.open.size > 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}

/** A bounded name for what a path does (a metric label; never the client's text). */
export function operationOf(path: string): string {
  if (path === '/v1/chat/completions' || path === '/v1/messages' || path === '/v1/responses') return 'chat';
  if (path === '/v1/embeddings') return 'embeddings';
  if (path === '/v1/messages/count_tokens' || path === '/v1/responses/input_tokens') return 'count_tokens';
  if (path === '/v1/models' || path.startsWith('/v1/models/')) return 'models';
  if (path.startsWith('/admin/')) return 'admin';
  if (path === '/healthz' || path === '/readyz') return 'health';
  if (path === '/metrics') return 'metrics';
  if (path === '/docs' || path.startsWith('/docs/')) return 'docs';
  return 'other';
}
