import { attemptFinishedV1ToV2 } from './attempt-finished-v2.js';
import { SCHEMA_VERSIONS } from './event.js';

/** Turns a payload of `fromVersion` into `fromVersion + 1`. */
export type UpcastStep = (data: Record<string, unknown>) => Record<string, unknown>;

/**
 * Registered steps by event type and source version. Old payloads are upcast on read so that readers
 * only ever handle the latest schema; the stored event is never rewritten.
 */
export class UpcasterRegistry {
  private readonly steps = new Map<string, Map<number, UpcastStep>>();

  constructor(private readonly latest: Readonly<Record<string, number>> = SCHEMA_VERSIONS) {}

  register(type: string, fromVersion: number, step: UpcastStep): this {
    if (!this.steps.has(type)) this.steps.set(type, new Map());
    this.steps.get(type)!.set(fromVersion, step);
    return this;
  }

  upcast = (type: string, schemaVersion: number, data: unknown): { schemaVersion: number; data: unknown } => {
    const target = this.latest[type] ?? schemaVersion;
    let version = schemaVersion;
    let payload = data as Record<string, unknown>;
    while (version < target) {
      const step = this.steps.get(type)?.get(version);
      if (!step) throw new Error(`No upcaster for ${type} v${version} → v${version + 1}`);
      payload = step(payload);
      version++;
    }
    return { schemaVersion: version, data: payload };
  };
}

/** The production registry: every schema change adds its step here. */
export const upcasters = new UpcasterRegistry().register('AttemptFinished', 1, attemptFinishedV1ToV2);
