import { Logger } from '@nestjs/common';
import { type Database, type Lease, type SqlExecutor, sqlErrorCode } from '../database/database.js';
import { EVENTS_CHANNEL, type ReadAllResult, type RecordedEvent } from '../event-store/event-store.js';
import { type LogPosition, START, comparePositions, parseXid8, samePosition, xid8Param } from '../event-store/log-position.js';
import type { SqlEventStore } from '../event-store/sql-event-store.js';
import { type PageTarget, StaleCheckpointError, commitIsolating, commitPage, positionOf } from './page-commit.js';
import { classifyFailure, thrownByProjection } from './projection-failure.js';
import { type ProjectionHalt, describeHalt, haltError, projectionHalts } from './projection-halts.js';
import { projectionCheckpoints } from './projection-checkpoints.js';
import { ALL_EVENT_TYPES, type DurableProjection, type EventTypeFilter, type InMemoryProjection, type ProjectionReplacement } from './projection.js';
import { type ReplacedRows, type ReplacementTables, createReplacementTables, dropReplacementTables, replaceRows, replacementSchema } from './replacement-tables.js';

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
  /** A transient failure it retries on the next wake-up. */
  lastError: string | null;
  /** Durable only: stopped at an event it cannot apply, in this process (`projection_halts` has every process's). */
  halted: ProjectionHalt | null;
  /** Durable only: the latest rebuild this process ran or runs. */
  rebuild: RebuildProgress | null;
}

/** A rebuild aside, as it goes (docs/operations.md "Rebuilding aside"). */
export interface RebuildProgress {
  state: 'replaying' | 'swapping' | 'done' | 'failed';
  startedAt: Date;
  finishedAt: Date | null;
  /** The global position of the last event the replacement has applied. */
  position: number;
  /** Why it failed; the live read model is as it was. */
  error: string | null;
  /** The event the replay could not apply, when that was the failure. */
  failedAt: { globalPosition: number; eventId: string; eventType: string } | null;
  /** What the swap changed in each live table. */
  replaced: ReplacedRows[] | null;
}

/** A rebuild's replay met an event it cannot apply (or failed otherwise): nothing was swapped in. */
export class RebuildFailedError extends Error {
  override readonly name = 'RebuildFailedError';
  constructor(
    readonly projection: string,
    readonly failedAt: RebuildProgress['failedAt'],
    readonly reason: string,
  ) {
    super(`rebuilding ${projection} failed${failedAt ? ` at global position ${failedAt.globalPosition} (event ${failedAt.eventId}, ${failedAt.eventType})` : ''}: ` +
      `${reason}; the live read model is untouched`);
  }
}

/** A rebuild of the projection is already under way, in this process or another. */
export class RebuildInProgressError extends Error {
  override readonly name = 'RebuildInProgressError';
}

/** A projection that catchUp or waitForEvent waited for is halted: it will not get there by itself. */
export class ProjectionHaltedError extends Error {
  override readonly name = 'ProjectionHaltedError';
  constructor(readonly halt: ProjectionHalt) {
    super(`Projection ${halt.name} is ${describeHalt(halt)}`);
  }
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
  /**
   * Durable only: its last read reached the end of the log, so it is near the others that did and reads
   * with them (projections at one position always share a read; one catching up from further back or a
   * failing one reads alone with its own types until it has caught up).
   */
  following: boolean;
  /** A transient failure, retried on the next wake-up. */
  lastError: string | null;
  /** Durable only: halted at an event it cannot apply; not woken until the halt is cleared. */
  halted: ProjectionHalt | null;
  /** The halt could not be written to `projection_halts` (the database failed meanwhile): written at the next check. */
  haltUnrecorded: boolean;
  /** When a halted worker next looks whether its halt was cleared. */
  nextHaltCheck: number;
  /** The halt `projection_halts` holds for it (read with the checkpoint): removed by the page that gets past it. */
  recordedHalt: ProjectionHalt | null;
  /** In-memory only: one read and apply. */
  step: ((worker: Worker) => Promise<boolean>) | null;
}

const DURABLE_WAKE_DELAY_MS = 100;

/** Transient failures a rebuild's replay rides out (with a backoff up to 8 s) before it gives up. */
const REBUILD_TRANSIENT_ATTEMPTS = 8;
/** Swaps tried before a rebuild gives up (each catches up under the live checkpoint's lock and may find the live one ahead). */
const SWAP_ATTEMPTS = 5;

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
  /** start() ran: this process follows the log (a CLI command that only reads or resumes does not). */
  private started = false;
  /** The latest rebuild of each projection this process ran, and the ones under way. */
  private readonly rebuilds = new Map<string, RebuildProgress>();
  private readonly rebuildRuns = new Set<Promise<unknown>>();

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
    this.workers.set(projection.name, this.worker(projection.name, 'durable', projection.eventTypes, null));
  }

  /** Catches every in-memory projection up (so the node serves a complete snapshot), then follows the log. */
  async start(): Promise<void> {
    if (this.options.listen !== false) this.unlisten = await this.database.listen(EVENTS_CHANNEL, (payload) => this.wakeFor(payload));
    await Promise.all([...this.workers.values()].filter((w) => w.kind === 'in-memory').map((w) => this.run(w)));
    this.started = true;
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
    // A rebuild under way gives up at its next page (its replacement is dropped; the live read model stays).
    await Promise.all([...this.rebuildRuns]);
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
      const behind = target ? selected.filter((w) => !w.halted && this.canMove(w) && comparePositions(w.position, target) < 0) : [];
      if (behind.length === 0) {
        // The others got there; a halted one never will by itself.
        const halted = selected.find((w) => w.halted);
        if (halted?.halted) throw new ProjectionHaltedError(halted.halted);
        return;
      }
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

  /** Whether start() has run: before it, the in-memory projections hold nothing (a CLI process never starts them). */
  get running(): boolean {
    return this.started;
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
      halted: w.halted,
      // A copy: the rebuild moves on while a caller awaits between reading its fields (a report's state and its detail must agree).
      rebuild: snapshot(this.rebuilds.get(w.name)),
    }));
  }

  /**
   * Every halted durable projection this runner knows, wherever it runs: the rows of `projection_halts`,
   * and this process's own halts (one whose row could not be written yet). A row stays until the projection
   * gets past its event, so a projection that a restart is trying again shows halted until it has.
   */
  async halts(): Promise<ProjectionHalt[]> {
    const byName = new Map<string, ProjectionHalt>();
    for (const halt of await projectionHalts.list(this.database)) if (this.durable.has(halt.name)) byName.set(halt.name, halt);
    for (const worker of this.workers.values()) if (worker.halted) byName.set(worker.name, worker.halted);
    return [...byName.values()];
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
   * An operator's resume of a halted projection: its halt is cleared (here and in `projection_halts`, which
   * is how the process that runs it hears of it when that is another one) and it tries the event again at
   * once — past it if the cause is gone, halted again (once) if not. Says whether it was halted.
   */
  async resume(name: string): Promise<boolean> {
    const worker = this.workers.get(name);
    if (!worker || worker.kind !== 'durable') throw new Error(`Unknown durable projection ${name}`);
    const cleared = await projectionHalts.clear(this.database, name);
    const halted = worker.halted !== null;
    if (halted) this.unhalt(worker, 'resumed by an operator');
    if (this.started) this.wake();
    return halted || cleared;
  }

  /**
   * Rebuilds a durable projection from position zero aside (docs/operations.md "Rebuilding aside"): its replacement is
   * replayed into a schema of the rebuild's own while the live read model keeps serving and moving; once
   * the replacement has reached the head, one transaction holding the live checkpoint's lock catches it up
   * with the last events, makes the live tables equal to it and moves the live checkpoint to its position
   * (the live writer, wherever it runs, then finds its checkpoint moved and reloads). A replay that meets
   * an event it cannot apply throws RebuildFailedError naming it, and the live read model is untouched.
   * Needs no lease of the projection: a CLI process can rebuild what a server runs. `onStarted` is called
   * once the replacement's storage exists and the replay begins (for a caller that does not wait).
   */
  rebuild(name: string, onStarted?: () => void): Promise<RebuildProgress> {
    const run = this.rebuildAside(name, onStarted);
    const tracked = run.catch(() => undefined);
    this.rebuildRuns.add(tracked);
    void tracked.finally(() => this.rebuildRuns.delete(tracked));
    return run;
  }

  private async rebuildAside(name: string, onStarted?: () => void): Promise<RebuildProgress> {
    const projection = this.durable.get(name);
    if (!projection) throw new Error(`Unknown durable projection ${name}`);
    const replacement = projection.replacement?.();
    if (!replacement) throw new Error(`The projection ${name} cannot be rebuilt aside`);
    const previous = this.rebuilds.get(name);
    if (previous?.state === 'replaying' || previous?.state === 'swapping') {
      throw new RebuildInProgressError(`A rebuild of ${name} is already under way in this process`);
    }
    // Claimed before the first await, so that two calls here cannot both pass the check above.
    const progress: RebuildProgress = { state: 'replaying', startedAt: new Date(), finishedAt: null, position: 0, error: null, failedAt: null, replaced: null };
    this.rebuilds.set(name, progress);
    const unclaim = () => (previous ? this.rebuilds.set(name, previous) : this.rebuilds.delete(name));
    const lease = await this.database.tryAcquireLease(leaseKey(`rebuild:${name}`)).catch((error: unknown) => {
      unclaim();
      throw error;
    });
    if (!lease) {
      unclaim();
      throw new RebuildInProgressError(`A rebuild of ${name} is already under way in another process`);
    }
    const schema = replacementSchema(name);
    let storage: ReplacementTables | null = null;
    try {
      storage = await createReplacementTables(this.database, schema, replacement.tables);
      await replacement.create?.();
      onStarted?.();
      const target: PageTarget = { projection: replacement.projection, name, searchPath: schema };
      for (let attempt = 1; ; attempt++) {
        await this.replayAside(target, progress);
        progress.state = 'swapping';
        const swapped = await this.swapIn(replacement, storage, target, progress).catch(async (error: unknown) => {
          // The swap's transaction rolled back: the replacement is as the replay left it, but not the replica's memory.
          await replacement.projection.resume?.();
          if (attempt >= SWAP_ATTEMPTS) throw error;
          this.logger.warn(`${name}: swapping the rebuilt read model in failed (${haltError(error)}); catching up and trying again`);
          return null;
        });
        if (swapped) {
          progress.replaced = swapped;
          break;
        }
        progress.state = 'replaying';
      }
      progress.state = 'done';
      progress.finishedAt = new Date();
      this.afterSwap(name);
      const changed = progress.replaced!.map((r) => `${r.table}: ${r.removed} live rows removed, ${r.added} added`);
      this.logger.log(`rebuilt ${name} aside up to global position ${progress.position} and swapped it in${changed.length ? ` (${changed.join('; ')})` : ''}`);
      return progress;
    } catch (error) {
      const failure = error instanceof RebuildFailedError ? error : new RebuildFailedError(name, null, haltError(error));
      progress.state = 'failed';
      progress.finishedAt = new Date();
      progress.error = failure.reason;
      progress.failedAt = failure.failedAt;
      this.logger.error(failure.message);
      throw failure;
    } finally {
      await replacement.discard?.().catch((error: Error) => this.logger.warn(`${name}: dropping the rebuild's storage outside PostgreSQL failed: ${error.message}`));
      if (storage) await dropReplacementTables(this.database, schema).catch((error: Error) => this.logger.warn(`${name}: dropping the rebuild's schema ${schema} failed: ${error.message}`));
      await lease.release();
    }
  }

  /**
   * Replays the replacement page by page from where it stands to the head of the log, as the live
   * projection applies its pages (its own checkpoint, in the replacement's copy of the checkpoint table).
   */
  private async replayAside(target: PageTarget, progress: RebuildProgress): Promise<void> {
    const { projection, name } = target;
    let position = await this.replacementCheckpoint(target);
    let transient = 0;
    for (;;) {
      if (this.stopped) throw new RebuildFailedError(name, null, 'the process is stopping');
      try {
        const page = await this.store.readAll(position, { limit: this.options.batchSize, types: typeFilter(projection.eventTypes) });
        if (page.events.length > 0) {
          const committed = (at: LogPosition, last: RecordedEvent | null) => {
            position = at;
            if (last) progress.position = last.globalPosition;
          };
          try {
            await commitPage(this.database, target, position, page.events, page.next);
            committed(page.next, page.events[page.events.length - 1]);
          } catch (error) {
            if (error instanceof StaleCheckpointError || classifyFailure(projection, error) === 'transient') throw error;
            const outcome = await commitIsolating(this.database, target, position, page.events, page.next, error, committed);
            if (outcome.kind === 'poison') {
              const { event } = outcome;
              throw new RebuildFailedError(name, { globalPosition: event.globalPosition, eventId: event.eventId, eventType: event.type }, haltError(outcome.error));
            }
          }
        }
        if (page.events.length === 0) position = page.next;
        transient = 0;
        if (page.caughtUp) return;
      } catch (error) {
        if (error instanceof RebuildFailedError) throw error;
        if (error instanceof StaleCheckpointError) throw new RebuildFailedError(name, null, `the replacement's checkpoint moved under the replay`);
        if (++transient >= REBUILD_TRANSIENT_ATTEMPTS) throw error;
        this.logger.warn(`${name}: the rebuild's replay failed (${haltError(error)}); trying again`);
        await projection.resume?.();
        position = await this.replacementCheckpoint(target);
        await new Promise((resolve) => setTimeout(resolve, Math.min(8_000, 250 * 2 ** transient)));
      }
    }
  }

  /** The replacement's checkpoint as stored in its schema. */
  private async replacementCheckpoint(target: PageTarget): Promise<LogPosition> {
    return this.database.transaction((tx) => projectionCheckpoints.load(tx, target.name), { searchPath: target.searchPath! });
  }

  /**
   * One transaction: locks the live checkpoint (a live writer, here or on another node, waits for it; a
   * page it had read is then found stale), catches the replacement up with the events committed since
   * its replay ended, makes each live table equal to the replacement's copy, swaps the storage outside
   * PostgreSQL, moves the live checkpoint to the replacement's and clears a halt. Null when the live
   * projection turned out to be ahead (the caller catches up and tries again).
   */
  private async swapIn(replacement: ProjectionReplacement, storage: ReplacementTables, target: PageTarget, progress: RebuildProgress): Promise<ReplacedRows[] | null> {
    const { projection, name } = target;
    return this.database.transaction(async (tx) => {
      const live = await lockLiveCheckpoint(tx, storage.checkpoints, name);
      let position = await projectionCheckpoints.lock(tx, name);
      for (;;) {
        const page = await this.store.readAllIn(tx, position, { limit: this.options.batchSize, types: typeFilter(projection.eventTypes) });
        if (page.events.length > 0) {
          try {
            await projection.prepare?.(page.events);
            await projection.handle(tx, page.events);
          } catch (error) {
            throw thrownByProjection(error);
          }
          progress.position = page.events[page.events.length - 1].globalPosition;
        }
        position = page.next;
        if (page.caughtUp) break;
      }
      if (comparePositions(position, live) < 0) {
        this.logger.warn(`${name}: the live projection is ahead of its rebuilt replacement; catching up again`);
        return null;
      }
      await projectionCheckpoints.save(tx, name, position);
      const replaced: ReplacedRows[] = [];
      for (const table of storage.tables) replaced.push(await replaceRows(tx, table));
      await replacement.swap?.();
      await tx.query(
        `UPDATE ${storage.checkpoints} SET transaction_id = $2::xid8, global_position = $3, updated_at = now() WHERE name = $1`,
        [name, xid8Param(position.transactionId), position.globalPosition],
      );
      await tx.query(`DELETE FROM ${storage.halts} WHERE name = $1`, [name]);
      return replaced;
    }, { searchPath: storage.schema });
  }

  /**
   * The live worker of this process, if any, reloads the moved checkpoint at its next wake-up (a page it
   * had read would find it moved anyway); a halt the rebuild got past is over.
   */
  private afterSwap(name: string): void {
    const worker = this.workers.get(name);
    if (!worker) return;
    if (worker.halted) this.unhalt(worker, 'rebuilt past the event it halted at');
    worker.persisted = null;
    worker.recordedHalt = null;
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
      running: null, again: false, lastError: null, following: true,
      halted: null, haltUnrecorded: false, nextHaltCheck: 0, recordedHalt: null,
    };
  }

  /**
   * At most one loop per in-memory worker, and one pass over all durable workers; a wake during a loop
   * (a pass) makes it go round once more.
   */
  private run(worker: Worker): Promise<void> {
    if (worker.kind === 'durable') return this.runDurable();
    if (worker.running) {
      worker.again = true;
      return worker.running;
    }
    worker.running = (async () => {
      try {
        do {
          worker.again = false;
          while (!this.stopped && (await worker.step!(worker)));
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
   * caught up, failed or halted; a halted one stays out of the passes (see checkHalt).
   */
  private async durablePass(): Promise<void> {
    const members: Worker[] = [];
    for (const worker of this.workers.values()) {
      if (worker.kind !== 'durable' || worker.running || this.stopped) continue;
      try {
        if (!(await this.holdsLease(worker))) continue;
        if (worker.halted) await this.checkHalt(worker);
        if (!worker.halted) members.push(worker);
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
        const more = await this.durableStepTogether(active, errors);
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
    if (worker.lease) {
      worker.persisted = null; // another node may have moved the checkpoint meanwhile
      // A halt of this process's earlier lease is tried once more, as at a restart (another node may have resumed it).
      worker.halted = null;
    }
    return Boolean(worker.lease);
  }

  /** The checkpoint as stored, when the worker does not know it (at start, after a lease or a move). */
  private async loadCheckpoint(worker: Worker): Promise<void> {
    if (worker.persisted) return;
    const projection = this.durable.get(worker.name)!;
    await projection.resume?.();
    worker.persisted = await projectionCheckpoints.load(this.database, projection.name);
    worker.position = worker.persisted;
    worker.recordedHalt = await projectionHalts.load(this.database, projection.name);
  }

  /**
   * Applies a worker's events of a page read from its position (or from before it, with those events
   * left out) and moves its checkpoint to the page's end, in one transaction. Says whether there is more.
   * A deterministic failure (classifyFailure) is not retried as it stands: the page is applied in parts
   * until the one event that fails alone is found, everything before it is committed, and the projection
   * halts at it.
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
        // Idle, but the stored checkpoint moved under us (a rebuild swapped in): start over from it.
        worker.persisted = null;
        return true;
      }
      return !page.caughtUp;
    }
    const target: PageTarget = { projection, name: projection.name, searchPath: null };
    const committed = (position: LogPosition, last: RecordedEvent | null) => {
      worker.persisted = position;
      worker.position = position;
      if (last) worker.lastGlobalPosition = last.globalPosition;
      if (worker.recordedHalt && comparePositions(position, worker.recordedHalt.position) >= 0) worker.recordedHalt = null;
    };
    // The page that gets past a recorded halt removes it, in its own transaction.
    const clearHalt = async (tx: SqlExecutor, next: LogPosition) => {
      if (worker.recordedHalt && comparePositions(next, worker.recordedHalt.position) >= 0) await projectionHalts.clearUpTo(tx, projection.name, next);
    };
    try {
      try {
        await commitPage(this.database, target, expected, events, page.next, clearHalt);
        committed(page.next, events[events.length - 1]);
      } catch (error) {
        if (error instanceof StaleCheckpointError || classifyFailure(projection, error) === 'transient') throw error;
        const outcome = await commitIsolating(this.database, target, expected, events, page.next, error, committed, clearHalt);
        if (outcome.kind === 'poison') {
          await this.halt(worker, outcome.event, outcome.error);
          return false;
        }
        this.logger.warn(`${worker.name}: a page failed as a whole (${haltError(error)}) but applied in parts; moving on`);
      }
    } catch (error) {
      if (error instanceof StaleCheckpointError) {
        worker.persisted = null; // someone else (a rebuild, another node) moved it: start over from theirs
        return true;
      }
      throw error;
    }
    return !page.caughtUp;
  }

  /**
   * Stops the worker at an event it cannot apply: recorded in `projection_halts` for every process to see,
   * said once at error level, and not woken again — no retry loop — until the halt is cleared.
   */
  private async halt(worker: Worker, event: RecordedEvent, error: unknown): Promise<void> {
    const code = sqlErrorCode(error) ?? null;
    const halt: ProjectionHalt = {
      name: worker.name, position: positionOf(event), eventId: event.eventId, eventType: event.type,
      error: haltError(error), errorCode: code, haltedAt: new Date(),
    };
    worker.halted = halt;
    worker.recordedHalt = halt;
    worker.following = false;
    worker.lastError = null;
    worker.nextHaltCheck = Date.now() + this.options.pollIntervalMs;
    this.logger.error(
      `${worker.name} ${describeHalt(halt)}. Every event before it is applied; nothing after it will be until the cause is fixed ` +
        `(${this.durable.get(worker.name)?.haltRemedy?.(error) ?? 'an upgrade whose upcaster repairs the event, a schema fix'}) and the projection is resumed: \`switchyard projections resume ${worker.name}\`, ` +
        `POST /admin/v1/projections/${worker.name}/resume, or a restart. The other projections keep moving.`,
    );
    await this.recordHalt(worker);
  }

  private async recordHalt(worker: Worker): Promise<void> {
    try {
      await projectionHalts.record(this.database, worker.halted!);
      worker.haltUnrecorded = false;
    } catch (error) {
      // Without the row, a check would read the halt as cleared: write it at the next check instead.
      worker.haltUnrecorded = true;
      this.logger.warn(`${worker.name}: recording its halt failed (${haltError(error)}); trying again at the next poll`);
    }
  }

  /**
   * A halted worker looks, once per poll interval, whether its halt was cleared — by an operator's resume
   * from any process, or by a rebuild that got past the event — and tries again if it was.
   */
  private async checkHalt(worker: Worker): Promise<void> {
    if (Date.now() < worker.nextHaltCheck) return;
    worker.nextHaltCheck = Date.now() + this.options.pollIntervalMs;
    if (worker.haltUnrecorded) return this.recordHalt(worker);
    const stored = await projectionHalts.load(this.database, worker.name);
    const halt = worker.halted!;
    if (stored && stored.eventId === halt.eventId && samePosition(stored.position, halt.position)) return;
    this.unhalt(worker, 'its halt was cleared');
  }

  private unhalt(worker: Worker, why: string): void {
    const halt = worker.halted;
    worker.halted = null;
    worker.haltUnrecorded = false;
    worker.persisted = null; // a rebuild may have moved the checkpoint meanwhile
    if (halt) this.logger.log(`${worker.name}: ${why}; trying the event at global position ${halt.position.globalPosition} again`);
  }
}

/** Locks a live checkpoint row in the swap's transaction (creating it first for a projection that never ran). */
async function lockLiveCheckpoint(tx: SqlExecutor, table: string, name: string): Promise<LogPosition> {
  const lock = () => tx.query<{ transaction_id: string; global_position: string }>(
    `SELECT transaction_id::text AS transaction_id, global_position::text AS global_position FROM ${table} WHERE name = $1 FOR UPDATE`,
    [name],
  );
  let rows = await lock();
  if (!rows[0]) {
    await tx.query(`INSERT INTO ${table} (name, transaction_id, global_position) VALUES ($1, '0'::xid8, 0) ON CONFLICT (name) DO NOTHING`, [name]);
    rows = await lock();
  }
  return rows[0] ? { transactionId: parseXid8(rows[0].transaction_id), globalPosition: Number(rows[0].global_position) } : START;
}

function snapshot(progress: RebuildProgress | undefined): RebuildProgress | null {
  return progress ? { ...progress } : null;
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
