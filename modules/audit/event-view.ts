import type { RecordedEvent } from '../../src/kernel/index.js';

/** An event as the history APIs show it (the position is the one users quote). */
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
