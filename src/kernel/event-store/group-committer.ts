import { Logger } from '@nestjs/common';
import { isConnectionLoss, retryOnConnectionLoss } from '../database/connection-loss.js';
import type { AppendRequest, AppendResult } from './event-store.js';
import { type PreparedAppend, prepareAppend } from './prepared-append.js';
import type { OutageSpool } from './spool/outage-spool.js';
import type { SqlEventStore } from './sql-event-store.js';

export interface GroupCommitOptions {
  /** Most events in one transaction. */
  maxBatchEvents: number;
  /** Most payload bytes in one transaction. */
  maxBatchBytes: number;
  /**
   * How long the first append of a batch waits for company when a commit slot is free. 0 (the serving
   * default) sends it on the next turn of the event loop, with everything queued in the same turn: low
   * load pays no timer, and high load batches by size anyway, because appends queue up while every slot
   * is committing and the next batch leaves the moment one is free.
   */
  maxDelayMs: number;
  /**
   * Batches committing at once. More keep a batch leaving while another waits on its commit, which
   * lowers latency only where commits wait on something other than CPU (a remote server, a slow fsync);
   * each batch also pays the statement's and the commit's fixed cost, so fewer, larger batches take less
   * CPU per append. The serving node uses 1 (src/platform.ts says why).
   */
  maxInFlight: number;
  /**
   * Attempts of a batch whose connection was lost (the first included), with backoff from 100 ms. Safe
   * because every event id is pinned before the first attempt: a batch that did commit is found stored.
   */
  connectionAttempts?: number;
  /**
   * At most one commit notification per this many ms (0: every commit announces itself). NOTIFY costs a
   * lock and a queue write in every commit; the data plane's events are followed by durable projections
   * that coalesce wake-ups anyway, so announcing the commits of a short interval once is enough. The
   * first commit after an interval ends announces, in its own statement, the commits the interval left
   * unannounced too; only when none comes within one more interval are they announced by a statement of
   * their own. So no subscriber waits for its poll, and none waits more than two intervals.
   */
  notifyIntervalMs?: number;
  /**
   * Where appends go while the database is unreachable (PostgreSQL deployments; DESIGN §7). A batch that
   * lost its connection on every attempt is written there instead of failing. While the spool holds
   * anything, new appends go straight to it, until its drainer has put a whole pass into the log; from
   * then on only appends to streams that still have spooled records do (OutageSpool.takes).
   */
  spool?: OutageSpool | null;
}

interface Pending {
  prepared: PreparedAppend;
  events: number;
  bytes: number;
  resolve: (result: AppendResult) => void;
  reject: (error: Error) => void;
}

const DEFAULT_CONNECTION_ATTEMPTS = 5;

/** One batch's commit, for whoever watches the committer (metrics): the kernel only reports, it never imports a watcher. */
export interface CommitStats {
  appends: number;
  events: number;
  durationMs: number;
  /** The whole batch failed (a single append's own rejection does not count). */
  failed: boolean;
}

export type CommitListener = (stats: CommitStats) => void;

/**
 * Group commit for the data plane (DESIGN §4): appends from concurrent requests share one multi-row
 * insert per transaction. Each caller's promise settles when its own batch commits; an append that
 * fails (say, a version conflict) fails alone. Each append is serialized once, when it is queued.
 */
export class GroupCommitter {
  private readonly logger = new Logger('GroupCommitter');
  private queue: Pending[] = [];
  private queuedEvents = 0;
  private timer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;
  private inFlight = 0;
  private idleWaiters: Array<() => void> = [];
  private lastNotifiedAt = 0;
  /** Types committed but not announced yet, and the timer that announces them. */
  private unannounced = new Set<string>();
  private announceTimer: NodeJS.Timeout | null = null;
  private readonly listeners = new Set<CommitListener>();

  constructor(
    private readonly store: SqlEventStore,
    private readonly options: GroupCommitOptions,
  ) {}

  append(request: AppendRequest): Promise<AppendResult> {
    let prepared: PreparedAppend;
    try {
      prepared = prepareAppend(request);
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    const spool = this.options.spool;
    if (spool?.takes(prepared.streamId)) return this.spoolAppends(spool, [prepared]).then(([result]) => result);
    return new Promise((resolve, reject) => {
      const events = prepared.eventIds.length;
      this.queue.push({ prepared, events, bytes: prepared.json.length, resolve, reject });
      this.queuedEvents += events;
      if (this.queuedEvents >= this.options.maxBatchEvents) this.flush();
      else if (this.inFlight >= this.options.maxInFlight) return; // a finishing batch sends the next
      else if (this.options.maxDelayMs <= 0) this.immediate ??= setImmediate(() => this.flush());
      else this.timer ??= setTimeout(() => this.flush(), this.options.maxDelayMs);
    });
  }

  /** Resolves once every queued append has committed or failed, and every commit has been announced. */
  async drain(): Promise<void> {
    if (this.queue.length > 0 || this.inFlight > 0) {
      await new Promise<void>((resolve) => {
        this.idleWaiters.push(resolve);
        this.flush();
      });
    }
    if (this.announceTimer) {
      clearTimeout(this.announceTimer);
      await this.announce();
    }
  }

  /** Calls `listener` after every batch; returns the function that stops it. */
  onCommit(listener: CommitListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get pending(): number {
    return this.queue.length;
  }

  private flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.immediate) {
      clearImmediate(this.immediate);
      this.immediate = null;
    }
    while (this.queue.length > 0 && this.inFlight < this.options.maxInFlight) {
      const batch = this.takeBatch();
      this.inFlight++;
      this.commit(batch).finally(() => {
        this.inFlight--;
        if (this.queue.length > 0) this.flush();
        else if (this.inFlight === 0) this.notifyIdle();
      });
    }
  }

  /** Never rejects: every caller of the batch is settled, with its own outcome or the batch's failure. */
  private async commit(batch: Pending[]): Promise<void> {
    const spool = this.options.spool;
    if (spool?.engaged && !spool.bypassing) return this.spoolBatch(spool, batch); // queued before the outage began
    const notify = this.claimNotification();
    // The types earlier commits left unannounced travel with this statement's notification.
    const carried = notify ? this.takeUnannounced() : [];
    const started = performance.now();
    let failed = false;
    let retried = false;
    try {
      const results = await retryOnConnectionLoss(() => this.store.appendPrepared(batch.map((pending) => pending.prepared), { notify, alsoAnnounce: carried }), {
        attempts: this.options.connectionAttempts ?? DEFAULT_CONNECTION_ATTEMPTS,
        baseDelayMs: 100,
        onRetry: (_error, attempt) => {
          retried = true;
          this.logger.warn(`a batch of ${batch.length} lost its database connection; retrying (${attempt})`);
        },
      });
      if (!notify) this.announceLater(batch.flatMap((pending) => pending.prepared.eventTypes));
      // A statement that appended nothing notifies nobody, and a retried one may have notified before the
      // connection was lost or not at all: what it carried is announced again (a spare wake-up costs a read).
      else if (carried.length > 0 && (retried || results.some((result) => result instanceof Error))) this.announceLater(carried);
      results.forEach((result, index) => (result instanceof Error ? batch[index].reject(result) : batch[index].resolve(result)));
    } catch (error) {
      if (carried.length > 0) this.announceLater(carried);
      if (spool && isConnectionLoss(error)) {
        this.logger.warn(`a batch of ${batch.length} could not reach the event store; writing it to the outage spool`);
        spool.engage();
        return this.spoolBatch(spool, batch);
      }
      const failure = error instanceof Error ? error : new Error(String(error));
      failed = true;
      for (const pending of batch) pending.reject(failure);
    } finally {
      this.report({ appends: batch.length, events: batch.reduce((sum, pending) => sum + pending.events, 0), durationMs: performance.now() - started, failed });
    }
  }

  private report(stats: CommitStats): void {
    for (const listener of this.listeners) {
      try {
        listener(stats);
      } catch (error) {
        this.logger.warn(`a commit listener failed: ${(error as Error).message}`);
      }
    }
  }

  private async spoolBatch(spool: OutageSpool, batch: Pending[]): Promise<void> {
    try {
      const results = await this.spoolAppends(spool, batch.map((pending) => pending.prepared));
      results.forEach((result, index) => batch[index].resolve(result));
    } catch (error) {
      for (const pending of batch) pending.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }

  /** Resolves once the appends are fsynced in the spool; their positions are known only after the drain. */
  private async spoolAppends(spool: OutageSpool, appends: PreparedAppend[]): Promise<AppendResult[]> {
    await spool.write(appends);
    return appends.map((append) => ({ nextExpectedVersion: versionAfter(append), positions: [], spooled: true }));
  }

  /** Whether the next batch's statement announces itself (at most once per interval). */
  private claimNotification(): boolean {
    const interval = this.options.notifyIntervalMs ?? 0;
    const now = Date.now();
    if (interval > 0 && now - this.lastNotifiedAt < interval) return false;
    this.lastNotifiedAt = now;
    return true;
  }

  /**
   * Types committed without a notification: the next notifying statement carries them, or, when none
   * comes within the interval after the current one ends, a statement of their own.
   */
  private announceLater(types: readonly string[]): void {
    for (const type of types) this.unannounced.add(type);
    if (this.announceTimer) return;
    const wait = Math.max(0, this.lastNotifiedAt + 2 * (this.options.notifyIntervalMs ?? 0) - Date.now());
    this.announceTimer = setTimeout(() => void this.announce(), wait);
    this.announceTimer.unref();
  }

  /** The types waiting to be announced, which the caller's statement now announces. */
  private takeUnannounced(): string[] {
    if (this.unannounced.size === 0) return [];
    const types = [...this.unannounced];
    this.unannounced.clear();
    if (this.announceTimer) clearTimeout(this.announceTimer);
    this.announceTimer = null;
    return types;
  }

  private async announce(): Promise<void> {
    this.announceTimer = null;
    if (this.unannounced.size === 0) return;
    const types = [...this.unannounced];
    this.unannounced.clear();
    this.lastNotifiedAt = Date.now();
    // A lost announcement only delays subscribers until their poll.
    await this.store.notify(types).catch((error: Error) => this.logger.warn(`commit notification not sent: ${error.message}`));
  }

  private takeBatch(): Pending[] {
    const batch: Pending[] = [];
    let events = 0;
    let bytes = 0;
    while (this.queue.length > 0) {
      const next = this.queue[0];
      const full = events + next.events > this.options.maxBatchEvents || bytes + next.bytes > this.options.maxBatchBytes;
      if (batch.length > 0 && full) break;
      batch.push(next);
      this.queue.shift();
      events += next.events;
      bytes += next.bytes;
    }
    this.queuedEvents -= events;
    return batch;
  }

  private notifyIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}

/** The stream version a spooled append will leave (-1 when it depends on what the log holds: expected `any`). */
function versionAfter(append: PreparedAppend): number {
  const expected = append.expectedVersion;
  if (expected === 'no-stream') return append.eventIds.length;
  if (typeof expected === 'number') return expected + append.eventIds.length;
  return -1;
}
