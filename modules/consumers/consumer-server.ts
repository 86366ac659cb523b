import { Server } from '@nestjs/microservices';
import { isObservable, lastValueFrom } from 'rxjs';
import { brokerEvent, MalformedBrokerMessage } from './broker-event.js';

/** What a consumer transport does with one delivery, decided by the handler's outcome. */
export type DeliveryOutcome = 'done' | 'retry' | 'drop';

/**
 * The part the broker-specific servers share: a delivery's body becomes an event, the controller's
 * `@EventPattern(<event type>)` handler runs, and only once it resolved is the message acknowledged. Nest's
 * own `handleEvent` subscribes to the handler without waiting for it (and logs a failure instead of
 * reporting it), which would acknowledge before the write: here the handler is awaited.
 */
export abstract class ConsumerServer extends Server {
  /** The event types the controllers handle: what the durable consumer or queue subscribes to. */
  protected handledTypes(): string[] {
    return [...this.messageHandlers.keys()];
  }

  protected async deliver(body: Uint8Array | string, description: string): Promise<DeliveryOutcome> {
    let event;
    try {
      event = brokerEvent(body);
    } catch (error) {
      this.logger.error(`${description}: dropped, ${(error as MalformedBrokerMessage).message}`);
      return 'drop';
    }
    const handler = this.getHandlerByPattern(event.type);
    // A type nobody handles (a queue bound to more than this process handles): nothing to do with it.
    if (!handler) return 'done';
    try {
      const result = await handler(event);
      if (isObservable(result)) await lastValueFrom(result, { defaultValue: undefined });
      return 'done';
    } catch (error) {
      this.logger.warn(`event ${event.eventId} (${event.type}): not handled yet, it will be delivered again (${(error as Error).message})`);
      return 'retry';
    }
  }

  override on(): never {
    throw new Error('this transport emits no events');
  }
}

/** Backoff of a delivery handled unsuccessfully: 0.5 s doubling to 30 s by its delivery count. */
export function redeliveryDelayMs(deliveries: number): number {
  return Math.min(30_000, 500 * 2 ** Math.max(0, Math.min(6, deliveries - 1)));
}
