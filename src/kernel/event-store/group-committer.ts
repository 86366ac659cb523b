import { Logger } from '@nestjs/common';
import { retryOnConnectionLoss } from '../database/connection-loss.js';
import type { AppendRequest, AppendResult } from './event-store.js';
import { type PreparedAppend, prepareAppend } from './prepared-append.js';
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
  /** Batches committing at once; more keep batches flowing while one waits on fsync. */
  maxInFlight: number;
  /**
   * Attempts of a batch whose connection was lost (the first included), with backoff from 100 ms. Safe
   * because every event id is pinned before the first attempt: a batch that did commit is found stored.
   */
  connectionAttempts?: number;
}

interface Pending {
  prepared: PreparedAppend;
  events: number;
  bytes: number;
  resolve: (result: AppendResult) => void;
  reject: (error: Error) => void;
}

const DEFAULT_CONNECTION_ATTEMPTS = 5;

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

  /** Resolves once every queued append has committed or failed. */
  drain(): Promise<void> {
    if (this.queue.length === 0 && this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.idleWaiters.push(resolve);
      this.flush();
    });
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
    try {
      const results = await retryOnConnectionLoss(() => this.store.appendPrepared(batch.map((pending) => pending.prepared)), {
        attempts: this.options.connectionAttempts ?? DEFAULT_CONNECTION_ATTEMPTS,
        baseDelayMs: 100,
        onRetry: (_error, attempt) => this.logger.warn(`a batch of ${batch.length} lost its database connection; retrying (${attempt})`),
      });
      results.forEach((result, index) => (result instanceof Error ? batch[index].reject(result) : batch[index].resolve(result)));
    } catch (error) {
      const failure = error instanceof Error ? error : new Error(String(error));
      for (const pending of batch) pending.reject(failure);
    }
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
