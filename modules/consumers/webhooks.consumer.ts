import { Controller, Inject } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import type { RecordedEvent } from '../../src/kernel/index.js';
import { WebhookDelivery } from './webhook-delivery.js';

/**
 * `switchyard consume webhooks`: the selected event types (SWITCHYARD_WEBHOOK_EVENTS) POSTed to the operator's
 * URLs. The pattern list is the setting's, so the controller is made per process; the handler resolves once
 * every URL took the event or got a dead letter, and only then is the message acknowledged.
 */
export function webhooksConsumer(types: readonly string[]) {
  @Controller()
  class WebhooksConsumer {
    constructor(@Inject(WebhookDelivery) private readonly delivery: WebhookDelivery) {}

    // Nest's decorator stores `[].concat(topic)`: a list registers the handler for each type.
    @EventPattern<Record<string, RecordedEvent>>([...types] as unknown as string)
    async deliver(@Payload() event: RecordedEvent): Promise<void> {
      await this.delivery.deliver(event);
    }
  }
  return WebhooksConsumer;
}
