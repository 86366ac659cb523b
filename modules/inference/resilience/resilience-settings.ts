import { ConfigurationError, type SettingDeclaration, type SettingsEnv, declareSettings, definedOnly, inlineCode, integerSetting, positiveIntegerSetting, textSetting } from '../../../src/kernel/index.js';

/** How a circuit breaker judges one deployment (DESIGN §6, issue 5 §4). */
export interface BreakerSettings {
  /** The rolling window failure rates are measured over. */
  windowMs: number;
  /** Fewest outcomes in the window before the failure rate may open the breaker. */
  minSamples: number;
  /** Opens when failures / samples exceeds this share (0..1). */
  failureRateThreshold: number;
  /** Opens on this many failures in a row, whatever the window says. */
  consecutiveFailures: number;
  /** First cool-down; doubles on every failed trial, up to `maxCooldownMs`. */
  cooldownMs: number;
  maxCooldownMs: number;
  /** Consecutive trial successes in half-open that close the breaker. */
  trialSuccesses: number;
  /** Trial requests allowed in flight at once while half-open. */
  maxTrialsInFlight: number;
}

/** Deadlines of one request, each with its own error. */
export interface DeadlineSettings {
  /** Opening the TCP/TLS connection to the provider (enforced by the deployment's undici pool). */
  connectTimeoutMs: number;
  /** Streams: attempt start to the first token, unless the alias sets its own `ttftTimeoutMs`. */
  ttftTimeoutMs: number;
  /** Streams: most time between two upstream chunks. */
  idleTimeoutMs: number;
  /** Streams: absolute lifetime from admission; heartbeats and trickles do not extend it. */
  streamTimeoutMs: number;
  /** Everything before the response starts (all attempts, retries and waits), and buffered answers. */
  requestTimeoutMs: number;
  /** Streams: most time a write to a slow client may wait for the socket to drain. */
  writeProgressTimeoutMs: number;
}

/**
 * How long a concurrency lease shared across nodes lasts: the longest a request (buffered or streamed)
 * may live, plus a margin. A lease is given back when its holder ends; this bounds only what a node that
 * died while holding it leaves behind.
 */
export function concurrencyLeaseMs(deadlines: DeadlineSettings): number {
  return Math.max(deadlines.requestTimeoutMs, deadlines.streamTimeoutMs) + 60_000;
}

/** The request-scoped attempt budget and the waits between retries of one deployment. */
export interface RetrySettings {
  /** Upstream calls per request, retries and fallbacks together, unless the alias sets `maxAttempts`. */
  maxAttempts: number;
  /** Full-jitter exponential backoff: a wait drawn from [0, min(max, base × 2^retry)). */
  baseBackoffMs: number;
  maxBackoffMs: number;
  /** A rate-limited deployment is retried once only when its retry-after is at most this long. */
  maxRetryAfterWaitMs: number;
}

export interface ResilienceSettings {
  breaker: BreakerSettings;
  deadlines: DeadlineSettings;
  retry: RetrySettings;
  /** How often breaker state is re-read from Redis (a safety net under publish/subscribe). */
  breakerSyncIntervalMs: number;
  /**
   * The most bytes a buffered provider answer may have (SWITCHYARD_MAX_ANSWER_BYTES); null: a bound per
   * request, a few MiB beyond the largest legitimate answer for it (pipeline/answer-size.ts).
   */
  maxAnswerBytes: number | null;
}

export const DEFAULT_RESILIENCE: ResilienceSettings = Object.freeze({
  breaker: Object.freeze({
    windowMs: 60_000,
    minSamples: 20,
    failureRateThreshold: 0.5,
    consecutiveFailures: 5,
    cooldownMs: 30_000,
    maxCooldownMs: 300_000,
    trialSuccesses: 5,
    maxTrialsInFlight: 1,
  }),
  deadlines: Object.freeze({
    connectTimeoutMs: 3_000,
    ttftTimeoutMs: 15_000,
    idleTimeoutMs: 30_000,
    streamTimeoutMs: 600_000,
    requestTimeoutMs: 120_000,
    writeProgressTimeoutMs: 10_000,
  }),
  retry: Object.freeze({
    maxAttempts: 3,
    baseBackoffMs: 100,
    maxBackoffMs: 2_000,
    maxRetryAfterWaitMs: 2_000,
  }),
  breakerSyncIntervalMs: 1_000,
  maxAnswerBytes: null,
});

/** Overrides (from the environment or a test) on top of the defaults, one level deep. */
export interface ResilienceOverrides {
  breaker?: Partial<BreakerSettings>;
  deadlines?: Partial<DeadlineSettings>;
  retry?: Partial<RetrySettings>;
  breakerSyncIntervalMs?: number;
  maxAnswerBytes?: number | null;
}

export function resolveResilience(overrides: ResilienceOverrides | undefined): ResilienceSettings {
  return {
    breaker: { ...DEFAULT_RESILIENCE.breaker, ...overrides?.breaker },
    deadlines: { ...DEFAULT_RESILIENCE.deadlines, ...overrides?.deadlines },
    retry: { ...DEFAULT_RESILIENCE.retry, ...overrides?.retry },
    breakerSyncIntervalMs: overrides?.breakerSyncIntervalMs ?? DEFAULT_RESILIENCE.breakerSyncIntervalMs,
    maxAnswerBytes: overrides?.maxAnswerBytes ?? DEFAULT_RESILIENCE.maxAnswerBytes,
  };
}

const { breaker: BREAKER, deadlines: DEADLINES, retry: RETRY } = DEFAULT_RESILIENCE;

/** The variables readResilienceOverrides reads; the defaults shown are DEFAULT_RESILIENCE's. */
export const RESILIENCE_ENVIRONMENT = declareSettings('modules/inference/resilience', {
  SWITCHYARD_CONNECT_TIMEOUT_MS: { type: 'integer > 0 (ms)', default: inlineCode(DEADLINES.connectTimeoutMs), meaning: 'opening the TCP/TLS connection to a provider' },
  SWITCHYARD_TTFT_TIMEOUT_MS: { type: 'integer > 0 (ms)', default: inlineCode(DEADLINES.ttftTimeoutMs), meaning: "streams: attempt start to the first token (per alias: `policy.ttftTimeoutMs`)" },
  SWITCHYARD_IDLE_TIMEOUT_MS: { type: 'integer > 0 (ms)', default: inlineCode(DEADLINES.idleTimeoutMs), meaning: 'streams: most time between two upstream chunks' },
  SWITCHYARD_STREAM_TIMEOUT_MS: { type: 'integer > 0 (ms)', default: inlineCode(DEADLINES.streamTimeoutMs), meaning: 'streams: absolute lifetime from admission; heartbeats and trickles do not extend it' },
  SWITCHYARD_REQUEST_TIMEOUT_MS: { type: 'integer > 0 (ms)', default: inlineCode(DEADLINES.requestTimeoutMs), meaning: 'everything before the response starts (all attempts, retries and waits), and buffered answers' },
  SWITCHYARD_WRITE_PROGRESS_TIMEOUT_MS: { type: 'integer > 0 (ms)', default: inlineCode(DEADLINES.writeProgressTimeoutMs), meaning: 'streams: most time a write to a slow client may wait for the socket to drain' },
  SWITCHYARD_MAX_ATTEMPTS: { type: 'integer > 0', default: inlineCode(RETRY.maxAttempts), meaning: 'upstream calls per request, retries and fallbacks together (per alias: `policy.maxAttempts`)' },
  SWITCHYARD_RETRY_BASE_MS: { type: 'integer ≥ 0 (ms)', default: inlineCode(RETRY.baseBackoffMs), meaning: 'full-jitter exponential backoff between retries of one deployment: a wait drawn from [0, min(max, base × 2^retry))' },
  SWITCHYARD_RETRY_MAX_MS: { type: 'integer ≥ 0 (ms)', default: inlineCode(RETRY.maxBackoffMs), meaning: "the backoff's ceiling" },
  SWITCHYARD_RETRY_AFTER_MAX_WAIT_MS: { type: 'integer ≥ 0 (ms)', default: inlineCode(RETRY.maxRetryAfterWaitMs), meaning: 'a rate-limited deployment is retried once only when its `retry-after` is at most this long' },
  SWITCHYARD_MAX_ANSWER_BYTES: {
    type: 'integer > 0 (bytes)',
    default: 'unset: per request, a few MiB beyond its largest legitimate answer',
    meaning: 'the most bytes a buffered provider answer may have',
  },
  SWITCHYARD_BREAKER_WINDOW_MS: { type: 'integer > 0 (ms)', default: inlineCode(BREAKER.windowMs), meaning: "circuit breaker: the rolling window a deployment's failure rate is measured over" },
  SWITCHYARD_BREAKER_MIN_SAMPLES: { type: 'integer > 0', default: inlineCode(BREAKER.minSamples), meaning: 'circuit breaker: fewest outcomes in the window before the failure rate may open it' },
  SWITCHYARD_BREAKER_FAILURE_RATE: { type: 'number between 0 and 1', default: inlineCode(BREAKER.failureRateThreshold), meaning: 'circuit breaker: opens when failures / samples exceeds this share' },
  SWITCHYARD_BREAKER_CONSECUTIVE_FAILURES: { type: 'integer > 0', default: inlineCode(BREAKER.consecutiveFailures), meaning: 'circuit breaker: opens on this many failures in a row, whatever the window says' },
  SWITCHYARD_BREAKER_COOLDOWN_MS: { type: 'integer > 0 (ms)', default: inlineCode(BREAKER.cooldownMs), meaning: 'circuit breaker: the first cool-down; doubles on every failed trial' },
  SWITCHYARD_BREAKER_MAX_COOLDOWN_MS: { type: 'integer > 0 (ms)', default: inlineCode(BREAKER.maxCooldownMs), meaning: 'circuit breaker: the longest cool-down' },
  SWITCHYARD_BREAKER_TRIAL_SUCCESSES: { type: 'integer > 0', default: inlineCode(BREAKER.trialSuccesses), meaning: 'circuit breaker: consecutive trial successes in half-open that close it' },
  SWITCHYARD_BREAKER_MAX_TRIALS: { type: 'integer > 0', default: inlineCode(BREAKER.maxTrialsInFlight), meaning: 'circuit breaker: trial requests in flight at once while half-open' },
});

/** Only the variables that are set; everything else keeps its default above. */
export function readResilienceOverrides(env: SettingsEnv): ResilienceOverrides {
  const pick = (setting: SettingDeclaration) => integerSetting(env, setting);
  const positive = (setting: SettingDeclaration) => positiveIntegerSetting(env, setting);
  const rate = textSetting(env, RESILIENCE_ENVIRONMENT.SWITCHYARD_BREAKER_FAILURE_RATE);
  if (rate !== undefined && rate !== '' && !(Number(rate) > 0 && Number(rate) < 1)) {
    throw new ConfigurationError('SWITCHYARD_BREAKER_FAILURE_RATE must be a number between 0 and 1');
  }
  return definedOnly({
    maxAnswerBytes: positive(RESILIENCE_ENVIRONMENT.SWITCHYARD_MAX_ANSWER_BYTES),
    deadlines: definedOnly({
      connectTimeoutMs: positive(RESILIENCE_ENVIRONMENT.SWITCHYARD_CONNECT_TIMEOUT_MS),
      ttftTimeoutMs: positive(RESILIENCE_ENVIRONMENT.SWITCHYARD_TTFT_TIMEOUT_MS),
      idleTimeoutMs: positive(RESILIENCE_ENVIRONMENT.SWITCHYARD_IDLE_TIMEOUT_MS),
      streamTimeoutMs: positive(RESILIENCE_ENVIRONMENT.SWITCHYARD_STREAM_TIMEOUT_MS),
      requestTimeoutMs: positive(RESILIENCE_ENVIRONMENT.SWITCHYARD_REQUEST_TIMEOUT_MS),
      writeProgressTimeoutMs: positive(RESILIENCE_ENVIRONMENT.SWITCHYARD_WRITE_PROGRESS_TIMEOUT_MS),
    }),
    retry: definedOnly({
      maxAttempts: positive(RESILIENCE_ENVIRONMENT.SWITCHYARD_MAX_ATTEMPTS),
      baseBackoffMs: pick(RESILIENCE_ENVIRONMENT.SWITCHYARD_RETRY_BASE_MS),
      maxBackoffMs: pick(RESILIENCE_ENVIRONMENT.SWITCHYARD_RETRY_MAX_MS),
      maxRetryAfterWaitMs: pick(RESILIENCE_ENVIRONMENT.SWITCHYARD_RETRY_AFTER_MAX_WAIT_MS),
    }),
    breaker: definedOnly({
      windowMs: positive(RESILIENCE_ENVIRONMENT.SWITCHYARD_BREAKER_WINDOW_MS),
      minSamples: positive(RESILIENCE_ENVIRONMENT.SWITCHYARD_BREAKER_MIN_SAMPLES),
      failureRateThreshold: rate === undefined || rate === '' ? undefined : Number(rate),
      consecutiveFailures: positive(RESILIENCE_ENVIRONMENT.SWITCHYARD_BREAKER_CONSECUTIVE_FAILURES),
      cooldownMs: positive(RESILIENCE_ENVIRONMENT.SWITCHYARD_BREAKER_COOLDOWN_MS),
      maxCooldownMs: positive(RESILIENCE_ENVIRONMENT.SWITCHYARD_BREAKER_MAX_COOLDOWN_MS),
      trialSuccesses: positive(RESILIENCE_ENVIRONMENT.SWITCHYARD_BREAKER_TRIAL_SUCCESSES),
      maxTrialsInFlight: positive(RESILIENCE_ENVIRONMENT.SWITCHYARD_BREAKER_MAX_TRIALS),
    }),
  });
}
