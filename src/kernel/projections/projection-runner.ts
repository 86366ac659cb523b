import { Logger } from '@nestjs/common';
import type { Database, Lease, TransactionOptions } from '../database/database.js';
import { EVENTS_CHANNEL, type ReadAllResult, type RecordedEvent } from '../event-store/event-store.js';
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
  /** Set while a rebuild drives the worker itself. */
  paused: boolean;
  /**
   * Durable only: its last read reached the end of the log, so it is near the others that did and reads
   * with them (projections at one position always share a read; one catching up from further back, a
   * rebuild or a failing one, reads alone with its own types until it has caught up).
   */
  following: boolean;
  lastError: string | null;
  step: (worker: Worker) => Promise<boolean>;
}

class StaleCheckpointError extends Error {}

const DURABLE_WAKE_DELAY_MS = 100;
/**
 * A page's effects and its checkpoint commit together, so a page lost with a crashed server is lost
 * whole and applied again from the log: its commit need not wait for the disk, and no longer queues
 * its own WAL flush behind (or ahead of) the appends that the requests are waiting for.
 */
const PROJECTION_COMMIT: TransactionOptions = { flush: 'background' };

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
  /** The pass over the durable projections under way, and whether a wake asked for another. */
  private durableRun: Promise<void> | null = null;
  private durableAgain = false;
  private durableWakeTimer: NodeJS.Timeout | null = null;
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
    if (this.durableWakeTimer) clearTimeout(this.durableWakeTimer);
    await this.unlisten?.().catch(() => undefined);
    await this.durableRun?.catch(() => undefined);
    await Promise.all([...this.workers.values()].map((w) => w.running?.catch(() => undefined)));
    for (const worker of this.workers.values()) await worker.lease?.release().catch(() => undefined);
  }

  wake(): void {
    if (this.stopped) return;
    void this.runAll([...this.workers.values()]).catch(() => undefined);
  }

  /** Runs the workers given: each in-memory one, and one pass over the durable ones if any is among them. */
  private runAll(workers: readonly Worker[]): Promise<unknown> {
    const inMemory = workers.filter((worker) => worker.kind === 'in-memory').map((worker) => this.run(worker));
    return Promise.all(workers.some((worker) => worker.kind === 'durable') ? [...inMemory, this.runDurable()] : inMemory);
  }

  /** A commit notification: wake only the projections that follow one of the committed types. */
  private wakeFor(payload: string): void {
    if (this.stopped) return;
    if (!payload) return this.wake();
    const types = payload.split(',');
    for (const worker of this.workers.values()) {
      if (worker.eventTypes !== ALL_EVENT_TYPES && !types.some((type) => worker.eventTypes.includes(type))) continue;
      if (worker.kind === 'durable') this.wakeDurableSoon();
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
   * Durable projections (billing, audit) need not follow every commit within milliseconds: coalescing
   * wake-ups lets each catch-up transaction take a larger page and keeps the database free for the data
   * plane. One timer for all of them, so they move together and share each read.
   */
  private wakeDurableSoon(): void {
    if (this.durableWakeTimer) return;
    this.durableWakeTimer = setTimeout(() => {
      this.durableWakeTimer = null;
      void this.runDurable().catch(() => undefined);
    }, DURABLE_WAKE_DELAY_MS);
    this.durableWakeTimer.unref();
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
      await this.runAll(selected);
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
      running: null, again: false, lastError: null, paused: false, following: true,
    };
  }

  /**
   * At most one loop per in-memory worker, and one pass over all durable workers; a wake during a loop
   * (a pass) makes it go round once more.
   */
  private run(worker: Worker): Promise<void> {
    if (worker.paused) return Promise.resolve();
    if (worker.kind === 'durable') return this.runDurable();
    if (worker.running) {
      worker.again = true;
      return worker.running;
    }
    worker.running = (async () => {
      try {
        do {
          worker.again = false;
          while (!this.stopped && (await worker.step(worker)));
        } while (worker.again && !this.stopped);
        worker.lastError = null;
      } catch (error) {
        this.failed(worker, error);
      } finally {
        worker.running = null;
      }
    })();
    return worker.running;
  }

  private failed(worker: Worker, error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    // Once per distinct failure: during a database outage every poll fails the same way.
    if (message !== worker.lastError) this.logger.warn(`${worker.name}: ${message}; retrying on the next wake-up`);
    worker.lastError = message;
    // A durable projection that keeps failing falls behind: it reads alone until it has caught up again.
    worker.following = false;
  }

  private runDurable(): Promise<void> {
    if (this.durableRun) {
      this.durableAgain = true;
      return this.durableRun;
    }
    this.durableRun = (async () => {
      try {
        do {
          this.durableAgain = false;
          await this.durablePass();
        } while (this.durableAgain && !this.stopped);
      } finally {
        this.durableRun = null;
      }
    })();
    return this.durableRun;
  }

  /**
   * Moves every durable projection this process holds the lease of to the end of the log. Each step,
   * the projections that follow the head and sit at (or just past) the earliest position share one
   * read of the log with the union of their types; each takes its own types from the page and applies
   * them in a transaction of its own, with its own checkpoint, so one projection failing or being
   * rebuilt never holds another back. A worker leaves the pass (its `running` settles) once it has
   * caught up, failed or been paused by a rebuild.
   */
  private async durablePass(): Promise<void> {
    const members: Worker[] = [];
    for (const worker of this.workers.values()) {
      if (worker.kind !== 'durable' || worker.paused || worker.running || this.stopped) continue;
      try {
        if (await this.holdsLease(worker)) members.push(worker);
      } catch (error) {
        this.failed(worker, error);
      }
    }
    const leaving = new Map<Worker, () => void>();
    for (const worker of members) worker.running = new Promise<void>((resolve) => leaving.set(worker, resolve));
    const leave = (worker: Worker) => {
      worker.running = null;
      leaving.get(worker)?.();
      leaving.delete(worker);
    };
    const errors = new Set<Worker>();
    try {
      let active = members;
      while (active.length > 0 && !this.stopped) {
        for (const worker of active) if (worker.paused) leave(worker);
        const more = await this.durableStepTogether(active.filter((worker) => !worker.paused), errors);
        for (const worker of active) if (!more.includes(worker)) leave(worker);
        active = more;
      }
    } finally {
      for (const worker of members) if (!errors.has(worker) && !this.stopped) worker.lastError = null;
      for (const worker of [...leaving.keys()]) leave(worker);
    }
  }

  /** One step of each worker given; returns those with more to read. */
  private async durableStepTogether(workers: readonly Worker[], errors: Set<Worker>): Promise<Worker[]> {
    const more: Worker[] = [];
    const pending: Worker[] = [];
    await Promise.all(workers.map(async (worker) => {
      try {
        await this.loadCheckpoint(worker);
        pending.push(worker);
      } catch (error) {
        errors.add(worker);
        this.failed(worker, error);
      }
    }));
    pending.sort((a, b) => comparePositions(a.position, b.position));
    while (pending.length > 0 && !this.stopped) {
      const first = pending[0];
      // The read's types: those of every worker at the earliest position, and when that one follows the
      // head, those of every other worker that does (they are near it, and join it on the page).
      const sharing = pending.filter((worker) => samePosition(worker.position, first.position) || (first.following && worker.following));
      const types = unionOf(sharing.map((worker) => worker.eventTypes));
      let page: ReadAllResult;
      try {
        page = await this.store.readAll(first.position, { limit: this.options.batchSize, types: typeFilter(types) });
      } catch (error) {
        for (const worker of pending) {
          errors.add(worker);
          this.failed(worker, error);
        }
        return more;
      }
      // The page holds every event of these types between its start and `next`: a worker of no other
      // types whose position lies in that range has its own page in it (the events after its position).
      const covered = pending.filter((worker) => comparePositions(worker.position, page.next) <= 0 && includes(types, worker.eventTypes));
      for (const worker of covered) pending.splice(pending.indexOf(worker), 1);
      await Promise.all(covered.map(async (worker) => {
        const events = page.events.filter((event) => comparePositions(event, worker.position) > 0 && follows(worker.eventTypes, event.type));
        try {
          if (await this.applyPage(worker, events, page)) more.push(worker);
        } catch (error) {
          errors.add(worker);
          this.failed(worker, error);
        }
      }));
    }
    return more;
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

  /** One step of a worker alone, reading only its own types (a rebuild replaying it). */
  private async durableStep(projection: DurableProjection, worker: Worker): Promise<boolean> {
    if (!worker.lease?.held) return false;
    await this.loadCheckpoint(worker);
    const page = await this.store.readAll(worker.position, { limit: this.options.batchSize, types: typeFilter(projection.eventTypes) });
    return this.applyPage(worker, page.events, page);
  }

  /** The checkpoint as stored, when the worker does not know it (at start, after a lease or a move). */
  private async loadCheckpoint(worker: Worker): Promise<void> {
    if (worker.persisted) return;
    const projection = this.durable.get(worker.name)!;
    await projection.resume?.();
    worker.persisted = await projectionCheckpoints.load(this.database, projection.name);
    worker.position = worker.persisted;
  }

  /**
   * Applies a worker's events of a page read from its position (or from before it, with those events
   * left out) and moves its checkpoint to the page's end, in one transaction. Says whether there is more.
   */
  private async applyPage(worker: Worker, events: readonly RecordedEvent[], page: Pick<ReadAllResult, 'next' | 'caughtUp'>): Promise<boolean> {
    // A lease lost with its session (the server dropped it) stops the projection until it is re-acquired:
    // another node may hold it by now.
    if (!worker.lease?.held) return false;
    // The checkpoint was dropped meanwhile (the lease taken again): reload it and read from there.
    const expected = worker.persisted;
    if (!expected) return true;
    const projection = this.durable.get(worker.name)!;
    worker.following = page.caughtUp;
    if (events.length === 0) {
      worker.position = page.next;
      if (page.caughtUp && !samePosition(await projectionCheckpoints.load(this.database, projection.name), expected)) {
        // Idle, but the stored checkpoint moved under us (a rebuild from the CLI reset it): start over from it.
        worker.persisted = null;
        return true;
      }
      return !page.caughtUp;
    }
    try {
      await projection.prepare?.(events);
      // The checkpoint's lock travels with BEGIN and its save with COMMIT: a page is three round trips (one
      // statement of the projection's own), not five.
      const checkpoint = projectionCheckpoints.pageStatements(projection.name, page.next);
      await this.database.transaction(async (tx, opened) => {
        const stored = (checkpoint && projectionCheckpoints.fromLocked(opened)) ?? await projectionCheckpoints.lock(tx, projection.name);
        if (!samePosition(stored, expected)) throw new StaleCheckpointError();
        await projection.handle(tx, events);
        if (!checkpoint) await projectionCheckpoints.save(tx, projection.name, page.next);
      }, { ...PROJECTION_COMMIT, ...checkpoint });
    } catch (error) {
      if (error instanceof StaleCheckpointError) {
        worker.persisted = null; // someone else (a rebuild, another node) moved it: start over from theirs
        return true;
      }
      throw error;
    }
    worker.persisted = page.next;
    worker.position = page.next;
    worker.lastGlobalPosition = events[events.length - 1].globalPosition;
    return !page.caughtUp;
  }
}

function typeFilter(eventTypes: EventTypeFilter): readonly string[] | undefined {
  return eventTypes === ALL_EVENT_TYPES ? undefined : eventTypes;
}

function unionOf(filters: readonly EventTypeFilter[]): EventTypeFilter {
  if (filters.includes(ALL_EVENT_TYPES)) return ALL_EVENT_TYPES;
  return [...new Set(filters.flat())];
}

/** Whether a read of `read`'s types holds every event of `wanted`'s. */
function includes(read: EventTypeFilter, wanted: EventTypeFilter): boolean {
  if (read === ALL_EVENT_TYPES) return true;
  return wanted !== ALL_EVENT_TYPES && wanted.every((type) => read.includes(type));
}

function follows(eventTypes: EventTypeFilter, type: string): boolean {
  return eventTypes === ALL_EVENT_TYPES || eventTypes.includes(type);
}

/** Advisory-lock key for a projection's lease: a stable 31-bit hash of its name. */
function leaseKey(name: string): number {
  let hash = 0x5717;
  for (const char of `projection:${name}`) hash = (Math.imul(hash, 31) + char.charCodeAt(0)) | 0;
  return hash & 0x7fffffff;
}
