import type { Context, Span } from '@opentelemetry/api';
import type { AttemptFinished, RequestAdmitted, RequestCompleted, TokenUsage } from '../../events/index.js';
import type { ResolvedDeployment } from '../../projections/routing-snapshot/index.js';
import type { Principal } from '../../projections/key-index/index.js';
import type { GatewayError } from '../canonical/index.js';
import { redactContent } from './content-redaction.js';
import { type GatewayMetrics, statusClass } from './gateway-metrics.js';
import { type GatewayTracing, endSpan } from './gateway-tracing.js';
import type { CacheOutcome, IdempotencyOutcome, RequestLogLine } from './request-log.js';

/** What an observation reports to when it ends. */
export interface ObservationSinks {
  metrics: GatewayMetrics;
  tracing: GatewayTracing;
  log: (line: RequestLogLine) => void;
  /** Tenants whose content is logged (`*` = every tenant). */
  contentLogTenants: ReadonlySet<string>;
  /** Called once, after the observation ended. */
  ended: (observation: RequestObservation) => void;
}

/** One attempt as the pipeline sees it: the headers that carry its trace to the provider. */
export interface AttemptObservation {
  upstreamHeaders: Record<string, string>;
}

/** A nested request's observation: `settled` with the status it came to ends it. */
export type NestedObservation = RequestObservation & { settled(httpStatus: number): void };

const TOKEN_TYPES: Array<[keyof TokenUsage, string]> = [
  ['input', 'input'], ['output', 'output'], ['cachedInput', 'cached_input'], ['cacheWrite', 'cache_write'], ['reasoning', 'reasoning'],
];

/**
 * One request, from its first byte to the end of its response: the single place the pipeline reports
 * to (`identify`, `admitted`, `attemptStarted`/`attemptFinished`, `completed`, `answeredWith`), and
 * the one that turns it into metrics, spans and the request's log line when the response has closed
 * and the pipeline has let go of it (a cancelled stream still settles after its client left).
 * Everything recorded here is an id, a count or a class; content only for an opted-in tenant, redacted.
 */
export class RequestObservation {
  private readonly startedAt = performance.now();
  private tenantId: string | null = null;
  private keyId: string | null = null;
  private alias: string | null = null;
  private stream = false;
  private deployment: ResolvedDeployment | null = null;
  private attempts = 0;
  private reserved = 0;
  private completion: RequestCompleted['data'] | null = null;
  private error: GatewayError | null = null;
  private ttftMs: number | null = null;
  private upstreamMs = 0;
  private attemptStartedAt: number | null = null;
  private attemptSpan: Span | null = null;
  private overheadMs: number | null = null;
  private content: { prompt: string | null; completion: string | null } | null = null;
  private cache: CacheOutcome | null = null;
  private idempotency: IdempotencyOutcome = 'none';
  private holds = 0;
  private closed = false;
  private ended = false;

  constructor(
    private readonly sinks: ObservationSinks,
    readonly requestId: string,
    private readonly method: string,
    private readonly path: string,
    readonly operation: string,
    /** The span the request runs in: a server span continuing the client's trace (Observability.track), or a nested request's. */
    private readonly server: { span: Span; context: Context },
    private readonly status: () => number,
  ) {}

  /**
   * A request the gateway makes on this one's behalf (a content policy's moderation call, operation `moderation`):
   * observed like a client's — `switchyard_requests_total`, its duration and errors, a request log line of its own
   * (path `(moderation)`, the checked request's tenant and key) and a span that is a child of this request's. It
   * has no response of its own: its status is the one it settled with, and `settled()` ends it.
   */
  nested(requestId: string, operation: string): NestedObservation {
    let status = 499;
    const span = this.sinks.tracing.startInternalSpan(operation, this.server.context, { 'switchyard.request_id': requestId, 'switchyard.caused_by': this.requestId });
    const nested = new RequestObservation(this.sinks, requestId, 'POST', `(${operation})`, operation, span, () => status);
    // The checked request's tenant and key; never its content (a moderation call's texts are not logged).
    nested.tenantId = this.tenantId;
    nested.keyId = this.keyId;
    return Object.assign(nested, {
      settled(httpStatus: number) {
        status = httpStatus;
        nested.responseClosed();
      },
    });
  }

  /** The key that authenticated the request (tenant and key id, never the key). */
  identify(principal: Principal): void {
    this.tenantId = principal.tenantId;
    this.keyId = principal.keyId;
    if (this.sinks.contentLogTenants.has('*') || this.sinks.contentLogTenants.has(principal.tenantId)) this.content = { prompt: null, completion: null };
  }

  /** Whether this request's content is logged (its tenant opted in): callers skip building it otherwise. */
  get logsContent(): boolean {
    return this.content !== null;
  }

  recordContent(part: 'prompt' | 'completion', text: () => string): void {
    if (this.content) this.content[part] = redactContent(text());
  }

  /** The exact cache decided (again, when a budget downgrade turned a hit or a miss into a bypass). */
  /** What a content policy found and did (counts per type, direction and action: never a value). */
  contentFindings(policy: string, findings: ReadonlyArray<{ type: string; direction: string; action: string; count: number }>): void {
    for (const finding of findings) {
      this.sinks.metrics.guardrailFindings.inc({ policy, type: finding.type, action: finding.action, direction: finding.direction }, finding.count);
    }
  }

  cacheDecided(outcome: CacheOutcome): void {
    this.cache = outcome;
  }

  /** What the request's Idempotency-Key came to (the last report counts: a turn that stored its answer says so). */
  idempotencyOutcome(outcome: IdempotencyOutcome): void {
    this.idempotency = outcome;
  }

  /** RequestAdmitted was recorded: the alias resolved and tokens reserved on this node. */
  admitted(data: RequestAdmitted['data']): void {
    this.alias = data.alias;
    this.stream = data.stream;
    this.reserved = data.estimatedInputTokens + data.reservedOutputTokens;
    this.sinks.metrics.reservedTokens.inc(this.reserved);
    // A span that records nothing (no exporter, or sampled out) drops attributes: they are not built for it.
    if (!this.server.span.isRecording()) return;
    this.server.span.setAttributes({
      'gen_ai.operation.name': data.operation,
      'gen_ai.request.model': data.alias,
      'switchyard.tenant_id': data.tenantId,
      'switchyard.stream': data.stream,
    });
  }

  /** An attempt begins: its client span, and a fallback counted when it moves to another deployment. */
  attemptStarted(deployment: ResolvedDeployment, attempt: number): AttemptObservation {
    if (this.deployment && this.deployment.id !== deployment.id) this.sinks.metrics.fallbacks.inc({ alias: this.alias ?? '', deployment: deployment.id });
    this.deployment = deployment;
    this.attempts = attempt;
    this.attemptStartedAt = performance.now();
    const operation = this.genAiOperation();
    const { span, headers } = this.sinks.tracing.startClientSpan(`${operation} ${deployment.model}`, this.server.context, {
      'gen_ai.operation.name': operation,
      'gen_ai.provider.name': genAiProviderName(deployment.provider.type),
      'gen_ai.request.model': deployment.model,
      'switchyard.deployment': deployment.id,
      'switchyard.attempt': attempt,
    });
    this.attemptSpan = span;
    return { upstreamHeaders: headers };
  }

  /** AttemptFinished was recorded: provider metrics, and the attempt's span ends with its usage. */
  attemptFinished(data: AttemptFinished['data']): void {
    const now = performance.now();
    if (this.attemptStartedAt !== null) this.upstreamMs += now - this.attemptStartedAt;
    this.attemptStartedAt = null;
    const provider = this.deployment ? genAiProviderName(this.deployment.provider.type) : '';
    const operation = this.genAiOperation();
    const alias = data.alias;
    const deployment = data.deploymentId;
    const labels = { gen_ai_operation_name: operation, gen_ai_provider_name: provider, alias, deployment };
    const { metrics } = this.sinks;
    // Label objects written out rather than spread from `labels` (cheaper); the key order is the export's.
    metrics.operationDuration.observe({ gen_ai_operation_name: operation, gen_ai_provider_name: provider, alias, deployment, error_type: data.errorClass ?? '' }, data.latencyMs / 1000);
    if (data.outcome !== 'failed' && data.outcome !== 'cancelled') {
      for (const [field, type] of TOKEN_TYPES) {
        if (field === 'input' || field === 'output' || data.usage[field] > 0) {
          metrics.tokenUsage.observe({ gen_ai_operation_name: operation, gen_ai_provider_name: provider, alias, deployment, gen_ai_token_type: type }, data.usage[field]);
        }
      }
    }
    if (data.ttftMs !== null) {
      this.ttftMs = data.ttftMs;
      metrics.timeToFirstToken.observe(labels, data.ttftMs / 1000);
    }
    const cost = Number(data.cost.total);
    if (cost > 0) metrics.cost.inc({ alias: data.alias, deployment: data.deploymentId, gen_ai_provider_name: provider }, cost);
    if (data.errorClass) metrics.attemptErrors.inc({ deployment: data.deploymentId, error_class: data.errorClass });
    if (data.usageEvidence === 'implausible') metrics.implausibleUsage.inc({ deployment: data.deploymentId, gen_ai_provider_name: provider });
    const span = this.attemptSpan;
    this.attemptSpan = null;
    if (!span) return;
    if (span.isRecording()) span.setAttributes({
      'gen_ai.response.model': data.model,
      'gen_ai.usage.input_tokens': data.usage.input,
      'gen_ai.usage.output_tokens': data.usage.output,
      'switchyard.outcome': data.outcome,
      ...(data.httpStatus !== null ? { 'http.response.status_code': data.httpStatus } : {}),
      ...(data.providerRequestId ? { 'gen_ai.response.id': data.providerRequestId } : {}),
    });
    endSpan(span, data.errorClass);
  }

  /** RequestCompleted was recorded (or the request settled without it). */
  completed(data: RequestCompleted['data']): void {
    this.completion = data;
    if (data.cacheHit) this.sinks.metrics.cacheHits.inc({ alias: this.alias ?? '' });
  }

  /** The error the client is answered with. */
  answeredWith(error: GatewayError): void {
    this.error = error;
  }

  /** The response headers are about to go out: the gateway's own time so far, waiting on providers excluded. */
  headersOut(): number {
    const waiting = this.upstreamMs + (this.attemptStartedAt !== null ? performance.now() - this.attemptStartedAt : 0);
    this.overheadMs = Math.max(0, Math.round((performance.now() - this.startedAt - waiting) * 100) / 100);
    return this.overheadMs;
  }

  /** The pipeline still works on the request (it may settle after the client left). */
  hold(): void {
    this.holds++;
  }

  release(): void {
    this.holds = Math.max(0, this.holds - 1);
    this.maybeEnd();
  }

  /** The response closed (finished, or the client went away). */
  responseClosed(): void {
    this.closed = true;
    this.maybeEnd();
  }

  get isEnded(): boolean {
    return this.ended;
  }

  private maybeEnd(): void {
    if (this.ended || !this.closed || this.holds > 0) return;
    this.ended = true;
    try {
      this.end();
    } finally {
      this.sinks.ended(this);
    }
  }

  private end(): void {
    const { metrics } = this.sinks;
    const latencyMs = performance.now() - this.startedAt;
    const status = this.status();
    // A stream that failed after its 200 went out ended with the status its settlement recorded.
    const outcomeStatus = this.completion && this.completion.httpStatus !== 200 ? this.completion.httpStatus : status;
    const errorClass = this.completion?.errorCode ?? this.error?.code ?? (outcomeStatus >= 400 ? `http_${outcomeStatus}` : null);
    const statusLabel = statusClass(outcomeStatus);
    const alias = this.alias ?? '';
    metrics.requests.inc({ operation: this.operation, alias, status_class: statusLabel });
    metrics.requestDuration.observe({ operation: this.operation, alias, status_class: statusLabel }, latencyMs / 1000);
    if (this.overheadMs !== null) metrics.overhead.observe({ operation: this.operation, status_class: statusClass(status) }, this.overheadMs / 1000);
    if (errorClass) metrics.requestErrors.inc({ error_class: errorClass, status_class: statusLabel });
    if (outcomeStatus === 429) metrics.rateLimitRefusals.inc({ scope: rateLimitScope(this.error) });
    if (this.reserved > 0) metrics.reservedTokens.dec(this.reserved);
    if (this.attemptSpan) endSpan(this.attemptSpan, 'cancelled');
    const usage = this.completion?.totals.usage ?? null;
    if (this.server.span.isRecording()) this.server.span.setAttributes({
      'http.response.status_code': status,
      ...(usage ? { 'gen_ai.usage.input_tokens': usage.input, 'gen_ai.usage.output_tokens': usage.output } : {}),
    });
    endSpan(this.server.span, errorClass);
    const spanContext = this.server.span.spanContext();
    this.sinks.log({
      requestId: this.requestId,
      method: this.method,
      path: this.path,
      operation: this.operation,
      status,
      ...(outcomeStatus !== status ? { outcomeStatus } : {}),
      errorClass,
      tenantId: this.tenantId,
      keyId: this.keyId,
      alias: this.alias,
      deployment: this.deployment?.id ?? null,
      provider: this.deployment?.provider.type ?? null,
      stream: this.stream,
      attempts: this.completion?.totals.attempts ?? this.attempts,
      fallbackDepth: this.completion?.fallbackDepth ?? Math.max(0, this.attempts - 1),
      tokens: usage ? { input: usage.input, output: usage.output, cachedInput: usage.cachedInput, cacheWrite: usage.cacheWrite, reasoning: usage.reasoning } : null,
      costUsd: this.completion?.totals.costUsd ?? null,
      latencyMs: Math.round(latencyMs),
      overheadMs: this.overheadMs,
      ttftMs: this.ttftMs,
      traceId: spanContext.traceFlags & 1 ? spanContext.traceId : null,
      cache: this.cache,
      idempotency: this.idempotency,
      ...(this.content ? { content: this.content } : {}),
    });
  }

  private genAiOperation(): string {
    return this.operation === 'embeddings' ? 'embeddings' : 'chat';
  }
}

/**
 * The scope a 429 exhausted, as a bounded label: its kind and limit (`key.maxConcurrency`,
 * `tenant.requests`, `alias.input_tokens` …) — never the id the error names (`key:acme-app`) — or
 * `provider` when every route was throttled upstream.
 */
function rateLimitScope(error: GatewayError | null): string {
  const scope = error?.detail?.scope;
  if (typeof scope === 'string') {
    const colon = scope.indexOf(':');
    if (colon < 0) return scope;
    const limit = error?.detail?.limit_type;
    return `${scope.slice(0, colon)}.${typeof limit === 'string' ? limit : 'rate'}`;
  }
  return error?.code === 'rate_limited' ? 'provider' : 'unknown';
}

/** The semantic conventions' provider names (gen_ai.provider.name) for Switchyard's provider types. */
export function genAiProviderName(type: string): string {
  switch (type) {
    case 'azure-openai': return 'azure.ai.openai';
    case 'gemini': return 'gcp.gemini';
    case 'bedrock': return 'aws.bedrock';
    default: return type; // openai, anthropic, openai-compatible, mock
  }
}
