import { createHmac } from 'node:crypto';
import { Logger } from '@nestjs/common';
import type { RecordedEvent } from '../../src/kernel/index.js';
import { eventView } from '../relay/index.js';

import { postWebhook } from '../limits/index.js';
import { OutboundPolicyViolation } from '../providers/index.js';
import type { WebhookSettings } from './webhook-settings.js';

/** What a URL that kept failing leaves behind (docs/events-out.md "webhooks"): published to the dead-letter destination. */
export interface WebhookDeadLetter {
  consumer: 'webhooks';
  /** The consumer group that gave up (SWITCHYARD_CONSUME_GROUP): added by the sink, which knows it. */
  group?: string;
  eventId: string;
  type: string;
  /** The URL's origin and its place in SWITCHYARD_WEBHOOK_URLS: a path may hold a token, so not the whole URL. */
  target: { origin: string; index: number };
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  deadAt: string;
  /** The event as it would have been delivered. */
  event: ReturnType<typeof eventView>;
}

/** Where dead letters go: the transport's own (a JetStream stream, a RabbitMQ queue). */
export interface DeadLetterSink {
  deadLetter(record: WebhookDeadLetter, id: string): Promise<void>;
}

/**
 * Delivers one event to every configured URL: the event view as the body, `x-switchyard-delivery` = event id
 * (receivers de-duplicate on it: a redelivered message, or a retry whose answer was lost, comes again with
 * the same id), `x-switchyard-event-type`, and `x-switchyard-signature: t=<unix s>,v1=<hex HMAC-SHA256 of
 * "<t>.<body>">` (the budget webhooks' scheme). Each URL gets up to `attempts` POSTs with a doubling backoff;
 * a 2xx ends it. The URLs are served at the same time, each on its own. A URL that kept failing gets a dead
 * letter and the event is done for it: one dead receiver must not hold the others' events back. Resolves once
 * every URL was answered or dead-lettered;
 * rejects only if a dead letter could not be stored (the broker then delivers the message again).
 */
export class WebhookDelivery {
  private readonly logger = new Logger('Webhooks');

  constructor(private readonly settings: WebhookSettings, private readonly sink: DeadLetterSink) {}

  async deliver(event: RecordedEvent): Promise<void> {
    const view = eventView(event);
    const body = JSON.stringify(view);
    // Each URL on its own: a receiver that is down (its retries, its timeouts) never delays the others' delivery.
    const outcomes = await Promise.allSettled(this.settings.urls.map((url, index) => this.deliverTo(event, view, body, url, index)));
    const failed = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** One URL: up to `attempts` POSTs, then a dead letter; rejects only when the dead letter could not be stored. */
  private async deliverTo(event: RecordedEvent, view: ReturnType<typeof eventView>, body: string, url: string, index: number): Promise<void> {
    const origin = new URL(url).origin;
    let lastStatus: number | null = null;
    let lastError: string | null = null;
    let attempts = 0;
    while (attempts < this.settings.attempts) {
      if (attempts > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(60_000, this.settings.backoffMs * 2 ** (attempts - 1))));
      attempts++;
      const timestamp = Math.floor(Date.now() / 1000);
      const signature = createHmac('sha256', this.settings.secret).update(`${timestamp}.${body}`).digest('hex');
      try {
        lastStatus = await postWebhook(
          { url, allowPrivateNetwork: this.settings.allowPrivateNetwork },
          {
            'content-type': 'application/json', 'x-switchyard-delivery': event.eventId, 'x-switchyard-event-type': event.type,
            'x-switchyard-signature': `t=${timestamp},v1=${signature}`,
          },
          body,
          { timeoutMs: this.settings.timeoutMs, onRefused: (host, address, reason) => this.logger.warn(`webhook ${origin}: connection to ${host} (${address}) refused: ${reason}`) },
        );
        lastError = null;
        if (lastStatus >= 200 && lastStatus < 300) return;
      } catch (error) {
        lastStatus = null;
        lastError = error instanceof OutboundPolicyViolation || (error as Error).cause instanceof OutboundPolicyViolation
          ? 'refused by the outbound address policy' : (error as Error).message;
        // The policy answers the same way every time: no point waiting for it.
        if (lastError === 'refused by the outbound address policy') break;
      }
    }
    this.logger.error(`event ${event.eventId} (${event.type}) to webhook ${index} (${origin}): failed ${attempts} time(s) (${lastError ?? `HTTP ${lastStatus}`}); dead-lettered`);
    await this.sink.deadLetter({
      consumer: 'webhooks', eventId: event.eventId, type: event.type, target: { origin, index }, attempts, lastStatus, lastError,
      deadAt: new Date().toISOString(), event: view,
    }, `${event.eventId}:${index}`);
  }
}
