import type { ServerResponse } from 'node:http';
import type { AttemptOutcome, TokenUsage, UsageEvidence } from '../../../events/index.js';
import {
  GatewayError, type ImplausibleUsage, ProviderError, type RelayedStreamEvent, type ReportedPrompt, type StreamEvent, checkReportedPrompt,
} from '../../canonical/index.js';
import type { UpstreamStream } from '../../providers/index.js';
import type { ClientStreamEncoder } from '../formats/client-stream-encoder.js';
import { DEADLINE_CODES, DeadlineExceeded, armDeadline, deadlineOf } from '../resilience/deadlines.js';
import type { DeadlineSettings } from '../resilience/resilience-settings.js';
import { attemptFailure } from './attempt-failure.js';
import { GatewayFault } from './gateway-fault.js';
import { OutputMeter } from './output-meter.js';
import { providerErrorMessageForClient } from './provider-error-disclosure.js';
import { SseResponse } from './sse-response.js';
import { durabilityRefusal } from './durability-refusal.js';
import type { UsageTerms } from './usage-bound.js';
import { AbortScope } from '../../../src/kernel/index.js';

/** One streamed attempt, as the attempt loop and settlement need it. */
export type StreamAttemptResult = { ttftMs: number | null; providerRequestId: string | null } & (
  /** Nothing reached the client: the request may still fall back. */
  | { reachedClient: false; error: ProviderError }
  /**
   * Output reached the client: the request is settled by this attempt, whatever happens next — a
   * provider failure (`error`) or the gateway's own (`fault`) may have cut it short.
   */
  | {
      reachedClient: true; outcome: AttemptOutcome; usage: TokenUsage; evidence: UsageEvidence; implausible: ImplausibleUsage | null;
      error: ProviderError | null; fault: GatewayFault | null;
    }
);

export interface StreamRelayOptions {
  raw: ServerResponse;
  requestId: string;
  /** One encoder for the whole response: formats whose closing frames depend on what was streamed need the encoder that wrote them. */
  encoder: ClientStreamEncoder;
  deadlines: Pick<DeadlineSettings, 'idleTimeoutMs' | 'streamTimeoutMs' | 'writeProgressTimeoutMs'>;
  /** The request's abort controller: the stream deadline and a stalled client end the whole request. */
  requestAbort: AbortScope;
  /** Called once, when the first output is about to reach the client (the pre-output deadline ends there). */
  onFirstOutput: () => void;
  /** Response headers besides the request id (e.g. `x-switchyard-cache`). */
  headers?: Record<string, string>;
  /** Sees each event relayed; set only when a tenant's content is logged (nothing per chunk otherwise). */
  onRelayed?: (event: StreamEvent) => void;
}

/**
 * The client side of a streamed request and the rules of relaying (DESIGN §6): the response opens with
 * the first semantic output, so an attempt that fails before it can still fall back; after it there is
 * no retry and no fallback. It owns the stream's deadlines — time to first token (per attempt, from its
 * start), idle between upstream events (renewed by events, not raw bytes or heartbeats), the absolute
 * stream lifetime (from admission) and write progress for a client that stops reading.
 */
export class StreamRelay {
  private readonly sse: SseResponse;
  private readonly lifetime: NodeJS.Timeout;

  constructor(private readonly options: StreamRelayOptions) {
    // Object.assign, not a spread followed by a key of its own (see eslint.config.js); the names are the gateway's own.
    this.sse = new SseResponse(options.raw, Object.assign({}, options.headers, { 'x-request-id': options.requestId }));
    // No heartbeat, trickle or retry extends this.
    this.lifetime = armDeadline(options.requestAbort, 'stream', options.deadlines.streamTimeoutMs);
  }

  /** Output reached the client. */
  get started(): boolean {
    return this.sse.isOpen;
  }

  get clientGone(): boolean {
    return this.sse.clientGone;
  }

  /**
   * Relays one attempt. `open` starts the upstream call with the attempt's signal; `ttftLimitMs` covers
   * connecting, the headers and the first output. The provider's counts are checked against `terms`
   * (the meter); they never reach the client's encoder unchecked.
   */
  async attempt(
    open: (signal: AbortSignal) => Promise<UpstreamStream>,
    ttftLimitMs: number,
    terms: UsageTerms,
    onTtft: (ttftMs: number) => void,
  ): Promise<StreamAttemptResult> {
    const attemptAbort = new AbortScope(this.options.requestAbort.signal);
    const meter = new OutputMeter();
    const started = Date.now();
    let ttftMs: number | null = null;
    let upstream: UpstreamStream | null = null;
    let iterator: AsyncIterator<StreamEvent> | null = null;
    const ttft = armDeadline(attemptAbort, 'ttft', ttftLimitMs);
    let idle: NodeJS.Timeout | null = null;
    const providerRequestId = () => upstream?.providerRequestId ?? null;
    try {
      upstream = await open(attemptAbort.signal);
      iterator = upstream.events[Symbol.asyncIterator]();
      const pending: RelayedStreamEvent[] = [];
      // Told to the encoder only once this attempt's output goes out: a failed attempt's count is not the next one's.
      let prompt: ReportedPrompt | null = null;
      for (;;) {
        const next = await iterator.next();
        if (next.done) {
          if (!meter.sawFinish) throw new ProviderError('malformed_response', 'the provider stream ended without any output');
          break;
        }
        const event = next.value;
        meter.observe(event);
        if (event.type === 'prompt_usage') prompt = event.usage;
        else if (event.type !== 'usage') pending.push(event);
        if (meter.sawOutput) break;
      }
      clearTimeout(ttft);
      ttftMs = Date.now() - started;
      onTtft(ttftMs);
      this.options.onFirstOutput();
      if (prompt) this.promptCounted(prompt, terms);
      this.options.encoder.upstreamToolArguments?.(upstream.toolArguments ?? 'text');
      this.sse.open(this.options.encoder.contentType);
      for (const event of pending) {
        this.options.onRelayed?.(event);
        const waiting = this.send(this.options.encoder.encode(event));
        if (waiting) await waiting;
      }
      this.sse.flush();
      idle = armDeadline(attemptAbort, 'idle', this.options.deadlines.idleTimeoutMs);
      for (;;) {
        const next = await iterator.next();
        if (next.done) break;
        idle.refresh();
        const event = next.value;
        meter.observe(event);
        // Counts go to the meter only (the settled usage reaches the client in the closing frames).
        if (event.type === 'usage' || event.type === 'prompt_usage') continue;
        this.options.onRelayed?.(event);
        const waiting = this.send(this.options.encoder.encode(event));
        if (waiting) await waiting;
      }
      if (!meter.sawFinish) throw new ProviderError('malformed_response', 'the provider stream ended without a finish reason');
      return { reachedClient: true, outcome: 'success', error: null, fault: null, ...meter.usage(terms), ttftMs, providerRequestId: providerRequestId() };
    } catch (error) {
      // Closing the iterator releases the upstream body (and its connection) at once.
      void iterator?.return?.().catch(() => undefined);
      const failure = attemptFailure(error, attemptAbort.signal);
      if (!attemptAbort.signal.aborted) attemptAbort.abort(failure instanceof GatewayFault ? new ProviderError('cancelled', 'the gateway ended the attempt') : failure);
      if (failure instanceof GatewayFault) {
        // Before any output the fault ends the request (our 500 or the caller's 4xx); after it, the stream
        // is cut with the fault's error and what was relayed is still billed.
        if (!this.sse.isOpen) throw failure;
        return { reachedClient: true, outcome: 'failed_partial', error: null, fault: failure, ...meter.usage(terms), ttftMs, providerRequestId: providerRequestId() };
      }
      // Nothing reached the client and the provider reported no usage: nothing to bill for this attempt.
      if (!this.sse.isOpen) return { reachedClient: false, error: failure, ttftMs, providerRequestId: providerRequestId() };
      const cancelled = failure.errorClass === 'cancelled' || this.sse.clientGone;
      return {
        reachedClient: true, outcome: cancelled ? 'cancelled' : 'failed_partial', error: failure, fault: null,
        ...meter.usage(terms), ttftMs, providerRequestId: providerRequestId(),
      };
    } finally {
      clearTimeout(ttft);
      if (idle) clearTimeout(idle);
      attemptAbort.dispose();
    }
  }

  /**
   * Ends a stream that reached the client, after `commit` made its events durable (DESIGN §7: before the
   * last byte). A successful stream gets its closing frames; a failed one an error event and no end
   * marker; a commit failure turns a success into an error event, because an unbilled answer must not
   * look complete.
   */
  async finish(result: Extract<StreamAttemptResult, { reachedClient: true }>, commit: () => Promise<void>, onCommitFailure: (error: Error) => void): Promise<void> {
    clearTimeout(this.lifetime);
    const { encoder } = this.options;
    if (result.outcome !== 'success') {
      await commit().catch(onCommitFailure);
      if (!this.sse.clientGone) {
        const { status, code } = streamFailure(result);
        const deadline = deadlineOf(result.error);
        const message = result.fault
          ? result.fault.error.message
          : deadline
            ? `The stream was ended: ${result.error!.message}.`
            : `The provider failed after the stream started: ${result.error ? providerErrorMessageForClient(result.error) : 'unknown error'}`;
        await this.sse.write(encoder.error(new GatewayError(status, code, message)));
        this.sse.end();
      }
      return;
    }
    try {
      await commit();
    } catch (error) {
      onCommitFailure(error as Error);
      await this.sse.write(encoder.error(durabilityRefusal(error, 'stream')));
      this.sse.end();
      return;
    }
    this.sse.end(encoder.finish(result.usage));
  }

  /** A prompt count reported before the output: the encoder shows it when the provider's number can be believed. */
  private promptCounted(reported: ReportedPrompt, terms: UsageTerms): void {
    const encoder = this.options.encoder;
    if (!encoder.promptCounted) return;
    const prompt = checkReportedPrompt(reported, terms.bound);
    if (prompt) encoder.promptCounted(prompt);
  }

  /** The relay is done with (the request failed before any output, or settled elsewhere). */
  dispose(): void {
    clearTimeout(this.lifetime);
  }

  /**
   * Writes to the client. A client that stops reading gets the write-progress deadline to drain the
   * socket; past it the stream is cut, the upstream call cancelled and the partial usage settled. The
   * timer exists only while a write is actually waiting for the socket.
   */
  private send(data: string): Promise<void> | null {
    const written = this.sse.write(data);
    // Null, not a resolved promise, when nothing waits: awaiting one per event is turns of the microtask
    // queue for every frame of every stream.
    if (!this.options.raw.writableNeedDrain) return null;
    return this.drained(written);
  }

  private async drained(written: Promise<void>): Promise<void> {
    const timer = setTimeout(() => {
      this.options.requestAbort.abort(new DeadlineExceeded('write_progress'));
      this.options.raw.destroy();
    }, this.options.deadlines.writeProgressTimeoutMs);
    try {
      await written;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The status and code a stream that failed after its first output is settled with. */
export function streamFailure(result: Pick<Extract<StreamAttemptResult, { reachedClient: true }>, 'outcome' | 'error' | 'fault'>): { status: number; code: string } {
  const { outcome, error, fault } = result;
  if (fault) return { status: fault.error.status, code: fault.error.code };
  const deadline = deadlineOf(error);
  if (outcome === 'cancelled') return { status: 499, code: deadline === 'write_progress' ? DEADLINE_CODES.write_progress : 'client_disconnected' };
  if (deadline) return { status: 504, code: DEADLINE_CODES[deadline] };
  return { status: 502, code: 'upstream_error' };
}
