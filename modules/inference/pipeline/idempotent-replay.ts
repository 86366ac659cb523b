import { createHash, randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { canonicalJson } from '../../../src/kernel/index.js';
import type { Principal } from '../../../projections/key-index/index.js';
import { StoreOutageLog } from '../../cache/index.js';
import type { IdempotencyStore } from '../../cache/index.js';
import type { StoredAnswer } from '../../cache/index.js';
import type { ChatRequest } from '../../canonical/index.js';
import { GatewayError } from '../../canonical/index.js';
import type { ClientFormat } from '../formats/client-format.js';
import type { Exchange } from './request-admission.js';
import { idempotencyKeyOf } from './request-headers.js';
import { replyWithStoredAnswer } from './stored-answer-reply.js';
import { type RequestObservation, observationOf } from '../../observability/index.js';

/** A running request's hold on its key; renewed while it runs, so a crashed node's hold runs out soon. */
const LEASE_MS = 30_000;
const RENEW_EVERY_MS = 10_000;
const FIRST_POLL_MS = 10;
const MAX_POLL_MS = 200;

export interface IdempotencySettings {
  retentionMs: number;
  /** How long a duplicate waits for the request holding its key (the request deadline). */
  waitLimitMs: number;
}

/** This request owns its key: it runs, and its outcome is stored for the retries. */
export interface IdempotentTurn {
  /** Stores the request's outcome for the retention window (a failure to store is logged, not thrown). */
  settle(answer: StoredAnswer): Promise<void>;
  /** Gives the key up unless an outcome was settled: a retry then runs again. Idempotent. */
  release(): void;
}

/**
 * The `Idempotency-Key` part of the pipeline, before admission: per principal (the key id) and key, a
 * retry within the retention window gets the stored outcome — re-encoded, buffered or SSE, with
 * `idempotent-replayed: true` and the original request id — without a provider call, an admission or a
 * bill; a duplicate that arrives while the first runs waits for it; the same key with a different body
 * is 422. Only complete answers are stored: an error (4xx or 5xx) or a cut stream is not, so its retry
 * runs again. When the store is unreachable the request is served without idempotency (logged).
 */
export class IdempotentReplay {
  private static readonly logger = new Logger('Idempotency');
  private readonly outage = new StoreOutageLog(IdempotentReplay.logger, 'idempotency store');

  constructor(
    private readonly store: IdempotencyStore,
    private readonly settings: IdempotencySettings,
  ) {}

  /**
   * Null: the request carries no key (or the store is unreachable) and runs as usual. 'replayed': the
   * stored outcome was written. Otherwise this request owns the key. Throws a GatewayError (nothing
   * written) for a bad key, a different body, or a wait that outlasted the request deadline.
   */
  async enter(exchange: Exchange, principal: Principal, format: ClientFormat, request: ChatRequest): Promise<IdempotentTurn | 'replayed' | null> {
    const key = idempotencyKeyOf(exchange.headers);
    if (key === null) return null;
    const observation = observationOf(exchange.raw);
    const scope = createHash('sha256').update(`${principal.keyId}\u0000${key}`).digest('hex');
    // The betas are part of what was asked (they change what the provider does); absent, the fingerprint is the body's alone.
    const asked = request.anthropicBetas ? { format: format.name, body: exchange.body, anthropicBetas: request.anthropicBetas } : { format: format.name, body: exchange.body };
    const fingerprint = createHash('sha256').update(canonicalJson(asked)).digest('hex');
    const owner = randomUUID();
    const deadline = Date.now() + this.settings.waitLimitMs;
    let pause = FIRST_POLL_MS;
    for (;;) {
      let claim;
      try {
        claim = await this.store.claim(scope, fingerprint, owner, LEASE_MS);
      } catch (error) {
        this.outage.failed(error);
        observation?.idempotencyOutcome('unavailable');
        return null;
      }
      switch (claim.kind) {
        case 'owner':
          observation?.idempotencyOutcome('not_stored');
          return this.turn(scope, owner, observation);
        case 'mismatch':
          observation?.idempotencyOutcome('key_reused');
          throw new GatewayError(422, 'idempotency_key_reused',
            'This Idempotency-Key was already used with a different request body. Use a new key for a new request.', 'idempotency-key');
        case 'completed': {
          const answer = claim.answer;
          const identity = { id: format.responseId(answer.requestId), created: answer.created, model: request.model };
          observation?.idempotencyOutcome('replayed');
          await replyWithStoredAnswer(exchange.raw, format, request, answer, identity, { 'x-request-id': answer.requestId, 'idempotent-replayed': 'true' });
          return 'replayed';
        }
        case 'pending':
          observation?.idempotencyOutcome('key_in_use');
          if (exchange.raw.destroyed) throw new GatewayError(499, 'client_disconnected', 'The client went away while waiting.');
          if (Date.now() + pause > deadline) {
            throw new GatewayError(409, 'idempotency_key_in_use',
              'A request with this Idempotency-Key is still in progress. Retry after it finishes.', 'idempotency-key', { 'retry-after': '1' });
          }
          await new Promise((resolve) => setTimeout(resolve, pause));
          pause = Math.min(MAX_POLL_MS, pause * 2);
      }
    }
  }

  private turn(scope: string, owner: string, observation: RequestObservation | null): IdempotentTurn {
    let done = false;
    const renewal = setInterval(() => {
      this.store.renew(scope, owner, LEASE_MS).catch((error) => this.outage.failed(error));
    }, RENEW_EVERY_MS);
    renewal.unref();
    const finish = () => {
      done = true;
      clearInterval(renewal);
    };
    return {
      settle: async (answer) => {
        if (done) return;
        finish();
        await this.store.settle(scope, owner, answer, this.settings.retentionMs).then(() => observation?.idempotencyOutcome('stored'), (error) => {
          this.outage.failed(error);
          return this.store.abandon(scope, owner).catch(() => undefined);
        });
      },
      release: () => {
        if (done) return;
        finish();
        this.store.abandon(scope, owner).catch((error) => this.outage.failed(error));
      },
    };
  }
}
