import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { LabelledCounter, LabelledHistogram } from './labelled-series.js';

/** Seconds, from 5 ms to 5 minutes: gateway overhead sits at the low end, long generations at the high one. */
const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** The OpenTelemetry GenAI semantic conventions' advice for token histograms. */
const TOKENS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304];
/** Overhead is small by design; finer buckets where it lives. */
const OVERHEAD_SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

/**
 * Every metric the gateway exports, on a registry of its own (never prom-client's global one, so two
 * gateways in one process — tests, workers — never share a series). Labels are bounded sets only:
 * operation, configured alias and deployment names, provider type, status class, error class and
 * limit scope; never a prompt, key, user or tenant id (tenants are in the request log).
 *
 * GenAI names follow the OpenTelemetry semantic conventions (gen_ai.client.operation.duration →
 * gen_ai_client_operation_duration_seconds); switchyard_* are the gateway's own. The labelled metrics
 * every request updates are LabelledCounter/LabelledHistogram (the same export, cheaper updates).
 */
export class GatewayMetrics {
  readonly registry = new Registry();

  readonly operationDuration = new LabelledHistogram({
    name: 'gen_ai_client_operation_duration_seconds',
    help: 'Duration of each call to a provider (one per attempt), by outcome.',
    labelNames: ['gen_ai_operation_name', 'gen_ai_provider_name', 'alias', 'deployment', 'error_type'] as const,
    buckets: SECONDS,
    registers: [this.registry],
  });

  readonly tokenUsage = new LabelledHistogram({
    name: 'gen_ai_client_token_usage',
    help: 'Tokens billed per attempt, by kind (input, output, cached_input, cache_write, reasoning).',
    labelNames: ['gen_ai_operation_name', 'gen_ai_provider_name', 'gen_ai_token_type', 'alias', 'deployment'] as const,
    buckets: TOKENS,
    registers: [this.registry],
  });

  readonly timeToFirstToken = new LabelledHistogram({
    name: 'gen_ai_server_time_to_first_token_seconds',
    help: 'Time from the start of a streamed attempt to its first output.',
    labelNames: ['gen_ai_operation_name', 'gen_ai_provider_name', 'alias', 'deployment'] as const,
    buckets: SECONDS,
    registers: [this.registry],
  });

  readonly requests = new LabelledCounter({
    name: 'switchyard_requests_total',
    help: 'Requests answered, by operation, alias (empty before one was resolved) and status class.',
    labelNames: ['operation', 'alias', 'status_class'] as const,
    registers: [this.registry],
  });

  readonly requestDuration = new LabelledHistogram({
    name: 'switchyard_request_duration_seconds',
    help: 'Whole request, from its first byte to the end of the response.',
    labelNames: ['operation', 'alias', 'status_class'] as const,
    buckets: SECONDS,
    registers: [this.registry],
  });

  readonly overhead = new LabelledHistogram({
    name: 'switchyard_gateway_overhead_seconds',
    help: 'Time the gateway itself added until the response headers (the x-switchyard-overhead-ms header): elapsed minus time waiting on providers.',
    labelNames: ['operation', 'status_class'] as const,
    buckets: OVERHEAD_SECONDS,
    registers: [this.registry],
  });

  readonly cost = new LabelledCounter({
    name: 'switchyard_cost_usd_total',
    help: 'Cost of the attempts billed, in USD (the ledger is exact; this is its running float approximation).',
    labelNames: ['alias', 'deployment', 'gen_ai_provider_name'] as const,
    registers: [this.registry],
  });

  readonly guardrailFindings = new LabelledCounter({
    name: 'switchyard_guardrail_findings_total',
    help: 'Content-policy findings, by policy (ids joined by +), finding type, action taken and direction (input, output). Never a value.',
    labelNames: ['policy', 'type', 'action', 'direction'] as const,
    registers: [this.registry],
  });

  readonly guardrailCheckDuration = new LabelledHistogram({
    name: 'switchyard_guardrail_check_duration_seconds',
    help: "Remote content checks (a policy's webhook), by policy, check and outcome (allow, block, error).",
    labelNames: ['policy', 'check', 'outcome'] as const,
    buckets: SECONDS,
    registers: [this.registry],
  });

  readonly guardrailCheckErrors = new LabelledCounter({
    name: 'switchyard_guardrail_check_errors_total',
    help: 'Remote content checks that gave no verdict, by policy, check, reason (timeout, connection, refused, status, answer, secret) and resolution (fail_open: let through; fail_closed: refused 503).',
    labelNames: ['policy', 'check', 'reason', 'resolution'] as const,
    registers: [this.registry],
  });

  readonly cacheHits = new LabelledCounter({
    name: 'switchyard_cache_hits_total',
    help: 'Requests answered from the response cache.',
    labelNames: ['alias'] as const,
    registers: [this.registry],
  });

  readonly rateLimitRefusals = new LabelledCounter({
    name: 'switchyard_rate_limit_refusals_total',
    help: 'Requests refused with 429, by the exhausted scope (key.maxConcurrency, tenant.maxConcurrency, provider …).',
    labelNames: ['scope'] as const,
    registers: [this.registry],
  });

  readonly fallbacks = new LabelledCounter({
    name: 'switchyard_fallbacks_total',
    help: 'Attempts sent to another deployment than the previous attempt of the same request, by the deployment fallen back to.',
    labelNames: ['alias', 'deployment'] as const,
    registers: [this.registry],
  });

  readonly requestErrors = new LabelledCounter({
    name: 'switchyard_request_errors_total',
    help: 'Requests that ended in an error, by error code (the client-visible one) and status class.',
    labelNames: ['error_class', 'status_class'] as const,
    registers: [this.registry],
  });

  readonly attemptErrors = new LabelledCounter({
    name: 'switchyard_attempt_errors_total',
    help: 'Provider attempts that failed, by deployment and error class.',
    labelNames: ['deployment', 'error_class'] as const,
    registers: [this.registry],
  });

  readonly implausibleUsage = new LabelledCounter({
    name: 'switchyard_provider_usage_implausible_total',
    help: 'Attempts whose provider reported usage the gateway did not believe (billed at its own count instead), by deployment.',
    labelNames: ['deployment', 'gen_ai_provider_name'] as const,
    registers: [this.registry],
  });

  readonly reservedTokens = new Gauge({
    name: 'switchyard_reserved_tokens',
    help: 'Tokens reserved at admission by the requests in flight on this node (estimated input + reserved output).',
    registers: [this.registry],
  });

  readonly commitBatchEvents = new Histogram({
    name: 'switchyard_group_commit_batch_events',
    help: 'Events per group-commit transaction.',
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512],
    registers: [this.registry],
  });

  readonly commitDuration = new Histogram({
    name: 'switchyard_group_commit_duration_seconds',
    help: 'Time one group-commit transaction took (insert and COMMIT, retries included).',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5],
    registers: [this.registry],
  });

  readonly commitFailures = new Counter({
    name: 'switchyard_group_commit_failures_total',
    help: 'Group-commit transactions that failed as a whole.',
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'switchyard_' }); // switchyard_process_*, switchyard_nodejs_*
  }

  /** A gauge whose value is read at scrape time (breaker states, in-flight counts, lags, spool depth). */
  gauge<L extends string>(name: string, help: string, labelNames: readonly L[], read: (gauge: Gauge<L>) => void | Promise<void>, aggregator: 'sum' | 'max' = 'sum'): void {
    new Gauge<L>({
      name, help, labelNames, aggregator, registers: [this.registry],
      async collect() {
        this.reset();
        await read(this);
      },
    });
  }
}

/** 2xx, 4xx, 5xx … */
export function statusClass(status: number): string {
  return `${Math.floor(status / 100)}xx`;
}
