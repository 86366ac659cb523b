import { Logger } from '@nestjs/common';
import type { Database, Lease } from '../database/database.js';
import { EVENTS_CHANNEL } from '../event-store/event-store.js';
import { type LogPosition, START, comparePositions, parseXid8, samePosition } from '../event-store/log-position.js';
import type { SqlEventStore } from '../event-store/sql-event-store.js';
import { projectionCheckpoints } from './projection-checkpoints.js';
import { ALL_EVENT_TYPES, type DurableProjection, type EventTypeFilter, type InMemoryProjection } from './projection.js';

export interface ProjectionRunnerOptions {
  /** Poll interval: the fallback when a notification is lost. */
  pollIntervalMs: number;
  /** LISTEN for commit notifications (default true); without it, polling alone wakes the projections. */
  listen?: boolean;
  batchSize: number;
  /** Run singleton projections in this process (CLI commands that only read turn it off). */
  runDurable: boolean;
}

export interface ProjectionStatus {
  name: string;
  kind: 'in-memory' | 'durable';
  /** The event types it follows (for lag and progress). */
  eventTypes: EventTypeFilter;
  position: LogPosition;
  lastGlobalPosition: number;
  leaseHeld: boolean;
  lastError: string | null;
}

interface Worker {
  name: string;
  kind: 'in-memory' | 'durable';
  eventTypes: EventTypeFilter;
  position: LogPosition;
  lastGlobalPosition: number;
  /** The checkpoint as stored (durable only); a transaction that finds another value there aborts. */
  persisted: LogPosition | null;
  lease: Lease | null;
  nextLeaseAttempt: number;
  running: Promise<void> | null;
  again: boolean;
  wakeTimer: NodeJS.Timeout | null;
  /** Set while a rebuild drives the worker itself. */
  paused: boolean;
  lastError: string | null;
  step: (worker: Worker) => Promise<boolean>;
}

class StaleCheckpointError extends Error {}

const DURABLE_WAKE_DELAY_MS = 100;

/** How long catchUp and waitForEvent wait for a held-back read horizon before they give up. */
const CATCH_UP_TIMEOUT_MS = 10_000;

/**
 * Runs catch-up subscriptions over the global order: every projection has its own position and is woken
 * by LISTEN/NOTIFY after each commit, with polling as the fallback.
 */
export class ProjectionRunner {
  private readonly logger = new Logger('Projections');
  private readonly workers = new Map<string, Worker>();
  private readonly durable = new Map<string, DurableProjection>();
  private pollTimer: NodeJS.Timeout | null = null;
  private unlisten: (() => Promise<void>) | null = null;
  private stopped = false;

  constructor(
    private readonly store: SqlEventStore,
    private readonly database: Database,
    private readonly options: ProjectionRunnerOptions,
  ) {}

  addInMemory(projection: InMemoryProjection): void {
    this.workers.set(projection.name, this.worker(projection.name, 'in-memory', projection.eventTypes, async (worker) => {
      const page = await this.store.readAll(worker.position, { limit: this.options.batchSize, types: typeFilter(worker.eventTypes) });
      if (page.events.length > 0) {
        projection.apply(page.events, page.next);
        worker.lastGlobalPosition = page.events[page.events.length - 1].globalPosition;
      }
      worker.position = page.next;
      return !page.caughtUp;
    }));
  }

  addDurable(projection: DurableProjection): void {
    this.durable.set(projection.name, projection);
    this.workers.set(projection.name, this.worker(projection.name, 'durable', projection.eventTypes, (worker) =>
      this.durableStep(projection, worker),
    ));
  }

  /** Catches every in-memory projection up (so the node serves a complete snapshot), then follows the log. */
  async start(): Promise<void> {
    if (this.options.listen !== false) this.unlisten = await this.database.listen(EVENTS_CHANNEL, (payload) => this.wakeFor(payload));
    await Promise.all([...this.workers.values()].filter((w) => w.kind === 'in-memory').map((w) => this.run(w)));
    this.pollTimer = setInterval(() => this.wake(), this.options.pollIntervalMs);
    this.pollTimer.unref();
    this.wake();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.pollTimer) clearInterval(this.pollTimer);
    for (const worker of this.workers.values()) if (worker.wakeTimer) clearTimeout(worker.wakeTimer);
    await this.unlisten?.().catch(() => undefined);
    await Promise.all([...this.workers.values()].map((w) => w.running?.catch(() => undefined)));
    for (const worker of this.workers.values()) await worker.lease?.release().catch(() => undefined);
  }

  wake(): void {
    if (this.stopped) return;
    for (const worker of this.workers.values()) void this.run(worker).catch(() => undefined);
  }

  /** A commit notification: wake only the projections that follow one of the committed types. */
  private wakeFor(payload: string): void {
    if (this.stopped) return;
    if (!payload) return this.wake();
    const types = payload.split(',');
    for (const worker of this.workers.values()) {
      if (worker.eventTypes !== ALL_EVENT_TYPES && !types.some((type) => worker.eventTypes.includes(type))) continue;
      if (worker.kind === 'durable') this.wakeSoon(worker);
      else void this.follow(worker).catch(() => undefined);
    }
  }

  /**
   * A notification says an event of this worker's types has committed, but the gap-free read can still
   * stop short of it: a transaction that began earlier (say, a request batch) and is still open holds the
   * horizon back, and its own notification may not wake this worker. Re-read with a short backoff until
   * something new arrives (about 1.3 s at most), rather than leaving it to the next poll.
   */
  private async follow(worker: Worker): Promise<void> {
    const before = worker.lastGlobalPosition;
    for (let delay = 10; !this.stopped; delay *= 2) {
      await this.run(worker);
      if (worker.lastGlobalPosition !== before || delay > 640) return;
      await new Promise((resolve) => setTimeout(resolve, delay).unref());
    }
  }

  /**
   * Durable projections (billing) need not follow every commit within milliseconds: coalescing wake-ups
   * lets each catch-up transaction take a larger page and keeps the database free for the data plane.
   */
  private wakeSoon(worker: Worker): void {
    if (worker.wakeTimer) return;
    worker.wakeTimer = setTimeout(() => {
      worker.wakeTimer = null;
      void this.run(worker).catch(() => undefined);
    }, DURABLE_WAKE_DELAY_MS);
    worker.wakeTimer.unref();
  }

  /**
   * Resolves when the named projections (default: all) have read everything committed before the call.
   * One pass is not always enough: a transaction still open anywhere on the server (another node's batch,
   * say) holds the read horizon back, and events committed after it began become readable only when it
   * ends. So the target is the last event visible now, and the projections are driven until they pass
   * it. A singleton projection whose lease is held elsewhere cannot move here and is not waited for.
   */
  async catchUp(names?: readonly string[], timeoutMs = CATCH_UP_TIMEOUT_MS): Promise<void> {
    await this.driveTo(names, await this.store.lastPosition(), timeoutMs, 'everything committed before the call');
  }

  /**
   * Read-your-writes: resolves once the named projections have read past the event at `globalPosition`
   * (for instance one a command just appended). The event becomes readable when every transaction that
   * started before it has ended, which on a busy server can take a moment.
   */
  async waitForEvent(names: readonly string[], globalPosition: number, timeoutMs = CATCH_UP_TIMEOUT_MS): Promise<void> {
    const rows = await this.database.query<{ transaction_id: string }>(
      `SELECT transaction_id FROM events WHERE global_position = $1`,
      [globalPosition],
    );
    if (!rows[0]) throw new Error(`No event at global position ${globalPosition}`);
    const target: LogPosition = { transactionId: parseXid8(rows[0].transaction_id), globalPosition };
    await this.driveTo(names, target, timeoutMs, `position ${globalPosition}`);
  }

  private async driveTo(names: readonly string[] | undefined, target: LogPosition | null, timeoutMs: number, what: string): Promise<void> {
    const selected = [...this.workers.values()].filter((w) => !names || names.includes(w.name));
    const deadline = Date.now() + timeoutMs;
    for (let delay = 5; ; delay = Math.min(100, delay * 2)) {
      await Promise.all(selected.map((w) => this.run(w)));
      const failed = selected.find((w) => w.lastError);
      if (failed) throw new Error(`Projection ${failed.name} failed: ${failed.lastError}`);
      const behind = target ? selected.filter((w) => this.canMove(w) && comparePositions(w.position, target) < 0) : [];
      if (behind.length === 0) return;
      if (Date.now() > deadline) {
        throw new Error(
          `Projections ${behind.map((w) => w.name).join(', ')} did not reach ${what} within ${timeoutMs} ms: ` +
            `a transaction open on the database server holds the read horizon back`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }

  /** Whether this process can move the worker (a singleton needs the lease). */
  private canMove(worker: Worker): boolean {
    return worker.kind === 'in-memory' || (this.options.runDurable && Boolean(worker.lease?.held));
  }

  status(): ProjectionStatus[] {
    return [...this.workers.values()].map((w) => ({
      name: w.name,
      kind: w.kind,
      eventTypes: w.eventTypes,
      position: w.position,
      lastGlobalPosition: w.lastGlobalPosition,
      leaseHeld: w.kind === 'in-memory' || Boolean(w.lease?.held),
      lastError: w.lastError,
    }));
  }

  /**
   * Events each projection this process moves has not applied yet (counted up to `cap`). Durable
   * projections whose lease another process holds are left out: their position here is not theirs.
   */
  async lag(cap: number): Promise<Array<{ name: string; kind: 'in-memory' | 'durable'; behind: number }>> {
    const moved = [...this.workers.values()].filter((worker) => this.canMove(worker));
    return Promise.all(moved.map(async (worker) => ({
      name: worker.name,
      kind: worker.kind,
      behind: await this.store.countAfter(worker.position, typeFilter(worker.eventTypes), cap),
    })));
  }

  /**
   * Deletes a durable projection's rows and checkpoint, then replays it from position zero. The worker
   * is paused meanwhile, so no wake-up interleaves a step of its own with the reset or the replay.
   * `onReset` is called once the reset is committed (a caller that does not wait for the replay).
   */
  async rebuild(name: string, onReset?: () => void): Promise<void> {
    const projection = this.durable.get(name);
    const worker = this.workers.get(name);
    if (!projection || !worker) throw new Error(`Unknown durable projection ${name}`);
    worker.paused = true;
    try {
      await worker.running?.catch(() => undefined);
      await this.database.transaction(async (tx) => {
        await projection.reset(tx);
        await projectionCheckpoints.remove(tx, name);
      });
      worker.persisted = null;
      worker.position = START;
      onReset?.();
      // Without the lease, the node that holds it sees the reset checkpoint and replays.
      if (!(await this.holdsLease(worker))) return;
      while (!this.stopped && (await worker.step(worker)));
    } finally {
      worker.paused = false;
    }
  }

  private worker(
    name: string,
    kind: Worker['kind'],
    eventTypes: EventTypeFilter,
    step: Worker['step'],
  ): Worker {
    return {
      name, kind, eventTypes, step,
      position: START, lastGlobalPosition: 0, persisted: null, lease: null, nextLeaseAttempt: 0,
      running: null, again: false, lastError: null, wakeTimer: null, paused: false,
    };
  }

  /** At most one loop per worker; a wake during a loop makes it go round once more. */
  private run(worker: Worker): Promise<void> {
    if (worker.paused) return Promise.resolve();
    if (worker.running) {
      worker.again = true;
      return worker.running;
    }
    worker.running = (async () => {
      try {
        do {
          worker.again = false;
          if (worker.kind === 'durable' && !(await this.holdsLease(worker))) return;
          while (!this.stopped && (await worker.step(worker)));
        } while (worker.again && !this.stopped);
        worker.lastError = null;
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        // Once per distinct failure: during a database outage every poll fails the same way.
        if (message !== worker.lastError) this.logger.warn(`${worker.name}: ${message}; retrying on the next wake-up`);
        worker.lastError = message;
      } finally {
        worker.running = null;
      }
    })();
    return worker.running;
  }

  private async holdsLease(worker: Worker): Promise<boolean> {
    if (!this.options.runDurable) return false;
    if (worker.lease?.held) return true;
    if (Date.now() < worker.nextLeaseAttempt) return false;
    worker.nextLeaseAttempt = Date.now() + 2000;
    worker.lease = await this.database.tryAcquireLease(leaseKey(worker.name));
    if (worker.lease) worker.persisted = null; // another node may have moved the checkpoint meanwhile
    return Boolean(worker.lease);
  }

  private async durableStep(projection: DurableProjection, worker: Worker): Promise<boolean> {
    // A lease lost with its session (the server dropped it) stops the projection until it is re-acquired:
    // another node may hold it by now.
    if (!worker.lease?.held) return false;
    if (!worker.persisted) {
      await projection.resume?.();
      worker.persisted = await projectionCheckpoints.load(this.database, projection.name);
      worker.position = worker.persisted;
    }
    const page = await this.store.readAll(worker.position, { limit: this.options.batchSize, types: typeFilter(projection.eventTypes) });
    if (page.events.length === 0) {
      worker.position = page.next;
      if (page.caughtUp && !samePosition(await projectionCheckpoints.load(this.database, projection.name), worker.persisted)) {
        // Idle, but the stored checkpoint moved under us (a rebuild from the CLI reset it): start over from it.
        worker.persisted = null;
        return true;
      }
      return !page.caughtUp;
    }
    const expected = worker.persisted;
    try {
      await this.database.transaction(async (tx) => {
        const stored = await projectionCheckpoints.lock(tx, projection.name);
        if (!samePosition(stored, expected)) throw new StaleCheckpointError();
        await projection.handle(tx, page.events);
        await projectionCheckpoints.save(tx, projection.name, page.next);
      });
    } catch (error) {
      if (error instanceof StaleCheckpointError) {
        worker.persisted = null; // someone else (a rebuild, another node) moved it: start over from theirs
        return true;
      }
      throw error;
    }
    worker.persisted = page.next;
    worker.position = page.next;
    worker.lastGlobalPosition = page.events[page.events.length - 1].globalPosition;
    return !page.caughtUp;
  }
}

function typeFilter(eventTypes: EventTypeFilter): readonly string[] | undefined {
  return eventTypes === ALL_EVENT_TYPES ? undefined : eventTypes;
}

/** Advisory-lock key for a projection's lease: a stable 31-bit hash of its name. */
function leaseKey(name: string): number {
  let hash = 0x5717;
  for (const char of `projection:${name}`) hash = (Math.imul(hash, 31) + char.charCodeAt(0)) | 0;
  return hash & 0x7fffffff;
}
