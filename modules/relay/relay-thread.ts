import { Logger } from '@nestjs/common';
import { Worker } from 'node:worker_threads';
import { type RecordedEvent, workerWithSemiSpace } from '../../src/kernel/index.js';
import { RelayRefusedError, RelayUnavailableError, RelayUnserializableError } from './relay-message.js';
import { RELAY_BROKER_NAMES } from './relay-transport.js';
import type { RelayCall, RelayReply, RelayThreadOptions } from './relay-thread-protocol.js';

/** A page handed to the publishing thread: how many of its events the broker acknowledged, and why not all (null: all). */
export interface PublishedPage {
  published: number;
  failure: RelayRefusedError | RelayUnavailableError | RelayUnserializableError | null;
}

interface Pending {
  resolve(reply: RelayReply): void;
  reject(error: Error): void;
}

type Call = { op: 'publish'; events: readonly RecordedEvent[] } | { op: 'close' };

/** The thread's young generation, in MB: it allocates a few hundred bytes an event, not the serving thread's 32 MB. */
const RELAY_SEMI_SPACE_MB = 8;
/** How long a closing thread may take to close its broker connection before it is stopped. */
const CLOSE_TIMEOUT_MS = 5_000;

/**
 * The relay's publishing thread (`relay-worker.ts`), started at the first page (nothing connects before) and
 * again after it died. A page crosses as the events themselves, which the thread turns into envelopes (cloning an
 * event costs this thread a fifth of what serializing it here did, and leaves no objects behind); the answer is
 * a count and, when not every event was acknowledged, the failure the relay acts on, rebuilt here as the error
 * it was. Should the thread die, every page in flight fails as unavailable: the relay publishes it
 * again from its checkpoint, through a new thread.
 */
export class RelayThread {
  private readonly logger = new Logger('Relay');
  private readonly pending = new Map<number, Pending>();
  private readonly broker: string;
  private worker: Worker | null = null;
  private nextId = 1;
  private closed = false;
  private closing: Promise<void> | null = null;
  /** The last way a thread was lost, logged once while threads keep being lost the same way. */
  private lastLoss: string | null = null;

  constructor(private readonly options: RelayThreadOptions) {
    this.broker = RELAY_BROKER_NAMES[options.settings.transport];
  }

  /**
   * Publishes a page of events, in commit order. Rejects with RelayUnavailableError when the thread is lost or
   * closed, and with the clone's own error (a DataCloneError, a RangeError) when the page cannot cross.
   */
  async publish(events: readonly RecordedEvent[]): Promise<PublishedPage> {
    const reply = await this.call({ op: 'publish', events });
    if (reply.kind !== 'published') throw new Error(`the relay's thread answered a publish with ${reply.kind}`);
    const { failure } = reply;
    return {
      published: reply.published,
      failure: !failure ? null
        : failure.kind === 'refused' ? new RelayRefusedError(failure.transport, failure.eventId, failure.reason)
          : failure.kind === 'unserializable' ? new RelayUnserializableError(`event ${failure.eventId} cannot be serialized: ${failure.reason}`)
            : new RelayUnavailableError(failure.transport, failure.reason),
    };
  }

  /** Closes the broker's connection, then the thread; pages in flight fail as unavailable. */
  close(): Promise<void> {
    this.closing ??= this.closeThread();
    return this.closing;
  }

  private async closeThread(): Promise<void> {
    const worker = this.worker;
    const closing = worker ? this.call({ op: 'close' }).catch(() => undefined) : null;
    this.closed = true;
    if (!worker || !closing) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([closing, new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_TIMEOUT_MS)))]);
    clearTimeout(timer);
    this.lost(worker, 'closed');
    await worker.terminate();
  }

  private call(call: Call): Promise<RelayReply> {
    if (this.closed) return Promise.reject(new RelayUnavailableError(this.broker, 'the relay is closed'));
    const worker = this.worker ?? this.start();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      try {
        worker.postMessage({ id, ...call } as RelayCall);
      } catch (error) {
        // A value that cannot cross threads: the page was never sent.
        reject(error as Error);
        return;
      }
      this.pending.set(id, { resolve, reject });
      worker.ref();
    });
  }

  private start(): Worker {
    const worker = workerWithSemiSpace(() => new Worker(new URL('./relay-worker.js', import.meta.url), {
      workerData: this.options,
      // V8's flags are the process's already (Node refuses them for a thread); a preloaded module is not the
      // relay's business.
      execArgv: [],
    }), RELAY_SEMI_SPACE_MB);
    worker.on('message', (reply: RelayReply) => this.received(reply));
    worker.on('error', (error) => this.lost(worker, `failed: ${error.message}`));
    worker.on('exit', (code) => this.lost(worker, `exited (code ${code})`));
    worker.unref();
    this.worker = worker;
    return worker;
  }

  private received(reply: RelayReply): void {
    if (reply.kind === 'log') {
      new Logger(reply.context)[reply.level](reply.message);
      return;
    }
    const pending = this.pending.get(reply.id);
    if (!pending) return;
    this.pending.delete(reply.id);
    if (this.pending.size === 0) this.worker?.unref();
    pending.resolve(reply);
    this.lastLoss = null;
  }

  /** The thread is gone: what waited on it fails as unavailable (published again from the checkpoint). */
  private lost(worker: Worker, what: string): void {
    if (this.worker !== worker) return;
    this.worker = null;
    if (what !== 'closed' && what !== this.lastLoss) this.logger.warn(`the relay's publishing thread ${what}; its pages are published again from the checkpoint`);
    this.lastLoss = what;
    const error = new RelayUnavailableError(this.broker, `the relay's publishing thread ${what}`);
    for (const [id, pending] of [...this.pending]) {
      this.pending.delete(id);
      pending.reject(error);
    }
  }
}
