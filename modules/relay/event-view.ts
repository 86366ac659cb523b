import type { RecordedEvent } from '../../src/kernel/index.js';

/**
 * An event as the history APIs show it and the relay publishes it (the position is the one users quote): one
 * definition, so `GET /admin/v1/events` (modules/audit), `switchyard events` and a broker's message are the same
 * JSON. It lives in the relay's module because the relay's thread loads this file (no runtime import) rather than
 * an index that would bring a module or the kernel with it (about 15 MB more in that thread).
 */
export type EventView = ReturnType<typeof eventView>;

export function eventView(event: RecordedEvent) {
  return {
    globalPosition: event.globalPosition,
    streamId: event.streamId,
    streamVersion: event.streamVersion,
    eventId: event.eventId,
    type: event.type,
    schemaVersion: event.schemaVersion,
    recordedAt: event.recordedAt.toISOString(),
    data: event.data,
    metadata: event.metadata,
  };
}
