import { isUuid, uuidv7 } from '../ids.js';
import type { AppendRequest, ExpectedVersion } from './event-store.js';

/**
 * An append ready for the database: every event id pinned (so that any retry of it is idempotent) and
 * every payload serialized exactly once, into the JSON fragment the append statement receives. The
 * fragment's length is also the group committer's size measure.
 */
export interface PreparedAppend {
  readonly streamId: string;
  readonly expectedVersion: ExpectedVersion;
  readonly eventIds: readonly string[];
  readonly eventTypes: readonly string[];
  /** `{"s":stream,"x":expected,"e":[{"i":id,"t":type,"v":schema,"d":data,"m":metadata},…]}` */
  readonly json: string;
}

const MAX_SCHEMA_VERSION = 32767; // smallint

/**
 * Pins ids and serializes. Throws (for this request alone) when an event cannot be stored as given:
 * data that is not JSON, a malformed or repeated event id, a bad schema version.
 */
export function prepareAppend(request: AppendRequest): PreparedAppend {
  const eventIds: string[] = [];
  const eventTypes: string[] = [];
  const events: string[] = [];
  const seen = new Set<string>();
  for (const event of request.events) {
    let eventId: string;
    let key: string;
    if (event.eventId === undefined || event.eventId === null) {
      eventId = uuidv7(); // well-formed and lower-case by construction
      key = eventId;
    } else {
      eventId = event.eventId;
      if (!isUuid(eventId)) throw new Error(`Stream ${request.streamId}: event id ${JSON.stringify(eventId)} is not a UUID`);
      key = eventId.toLowerCase();
    }
    if (seen.has(key)) throw new Error(`Stream ${request.streamId}: event id ${eventId} appears twice in one append`);
    seen.add(key);
    const schemaVersion = event.schemaVersion ?? 1;
    if (!Number.isInteger(schemaVersion) || schemaVersion < 1 || schemaVersion > MAX_SCHEMA_VERSION) {
      throw new Error(`Stream ${request.streamId}: schema version ${schemaVersion} of ${event.type} is not an integer in 1…${MAX_SCHEMA_VERSION}`);
    }
    if (typeof event.type !== 'string' || event.type.length === 0) throw new Error(`Stream ${request.streamId}: an event has no type`);
    const data = JSON.stringify(event.data);
    if (data === undefined) throw new Error(`Stream ${request.streamId}: the data of ${event.type} is not JSON`);
    const metadata = JSON.stringify(event.metadata ?? {});
    eventIds.push(eventId);
    eventTypes.push(event.type);
    events.push(`{"i":"${eventId}","t":${JSON.stringify(event.type)},"v":${schemaVersion},"d":${data},"m":${metadata}}`);
  }
  return {
    streamId: request.streamId,
    expectedVersion: request.expectedVersion,
    eventIds,
    eventTypes,
    json: `{"s":${JSON.stringify(request.streamId)},"x":${encodeExpected(request.expectedVersion)},"e":[${events.join(',')}]}`,
  };
}

/** Expected versions as integers for SQL: -1 any, -3 stream-exists, n ≥ 0 exact (no-stream = 0). */
function encodeExpected(expected: ExpectedVersion): number {
  if (expected === 'any') return -1;
  if (expected === 'stream-exists') return -3;
  if (expected === 'no-stream') return 0;
  if (!Number.isInteger(expected) || expected < 0) throw new Error(`Expected version ${String(expected)} is not a version`);
  return expected;
}
