import type { AppendRequest, AppendResult } from './event-store.js';
import type { SqlEventStore } from './sql-event-store.js';

export interface GroupCommitOptions {
  /** Most events in one transaction. */
  maxBatchEvents: number;
  /** Most payload bytes in one transaction. */
  maxBatchBytes: number;
  /** How long the first append of a batch waits for company. */
  maxDelayMs: number;
  /** Batches committing at once; more keep batches flowing while one waits on fsync. */
  maxInFlight: number;
}

interface Pending {
  request: AppendRequest;
  events: number;
  bytes: number;
  resolve: (result: AppendResult) => void;
  reject: (error: Error) => void;
}

/**
 * Group commit for the data plane (DESIGN §4): appends from concurrent requests share one multi-row
 * insert per transaction. Each caller's promise settles when its own batch commits; an append that
 * fails (say, a version conflict) fails alone.
 */
export class GroupCommitter {
  private queue: Pending[] = [];
  private queuedEvents = 0;
  private timer: NodeJS.Timeout | null = null;
  private inFlight = 0;
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly store: SqlEventStore,
    private readonly options: GroupCommitOptions,
  ) {}

  append(request: AppendRequest): Promise<AppendResult> {
    return new Promise((resolve, reject) => {
      let bytes = 0;
      for (const event of request.events) bytes += estimateBytes(event.data);
      this.queue.push({ request, events: request.events.length, bytes, resolve, reject });
      this.queuedEvents += request.events.length;
      if (this.queuedEvents >= this.options.maxBatchEvents) this.flush();
      else if (!this.timer) this.timer = setTimeout(() => this.flush(), this.options.maxDelayMs);
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
    while (this.queue.length > 0 && this.inFlight < this.options.maxInFlight) {
      const batch = this.takeBatch();
      this.inFlight++;
      this.store
        .appendMany(batch.map((pending) => pending.request))
        .then(
          (results) =>
            results.forEach((result, index) =>
              result instanceof Error ? batch[index].reject(result) : batch[index].resolve(result),
            ),
          (error: unknown) => {
            const failure = error instanceof Error ? error : new Error(String(error));
            for (const pending of batch) pending.reject(failure);
          },
        )
        .finally(() => {
          this.inFlight--;
          if (this.queue.length > 0) this.flush();
          else if (this.inFlight === 0) this.notifyIdle();
        });
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

/** A cheap upper-bound size estimate; request events are small flat objects. */
function estimateBytes(data: unknown): number {
  return JSON.stringify(data)?.length ?? 0;
}
