import type { RecordedEvent } from '../../src/kernel/index.js';
import type { RelaySettings } from './relay-settings.js';

/** The messages between the relay (on the projection runner's thread) and its publishing thread (`relay-worker.ts`). */

export interface RelayThreadOptions {
  /** The broker (its URL carries credentials: it crosses to the thread, never into a log). */
  settings: Pick<RelaySettings, 'transport' | 'url' | 'servers'>;
  ackTimeoutMs: number;
}

export type RelayCall =
  /**
   * A page, in commit order, as the events themselves (plain JSON payloads, a Date and a bigint: they cross by
   * structured clone, which keeps keys' order, so the thread's `eventView` serializes them as this side would):
   * published per stream in order, answered once every publish settled.
   */
  | { op: 'publish'; id: number; events: readonly RecordedEvent[] }
  | { op: 'close'; id: number };

/** Why a page was not published whole, as plain data (errors cross threads without their class). */
export type RelayFailure =
  | { kind: 'refused'; transport: string; eventId: string; reason: string }
  | { kind: 'unavailable'; transport: string; reason: string }
  /** An event the thread could not serialize: the same again next time. */
  | { kind: 'unserializable'; eventId: string; reason: string };

export type RelayLogLevel = 'log' | 'error' | 'warn' | 'debug' | 'verbose' | 'fatal';

export type RelayReply =
  | { kind: 'published'; id: number; published: number; failure: RelayFailure | null }
  | { kind: 'closed'; id: number }
  /** A log line of the broker's client (reconnecting, a lost connection): logged by the gateway's own logger. */
  | { kind: 'log'; level: RelayLogLevel; context: string; message: string };
