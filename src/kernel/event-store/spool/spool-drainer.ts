import { Logger } from '@nestjs/common';
import { describeDatabaseError, isConnectionLoss } from '../../database/connection-loss.js';
import { nextEventLoopTurn } from '../../event-loop-turn.js';
import type { PreparedAppend } from '../prepared-append.js';
import type { SqlEventStore } from '../sql-event-store.js';
import type { OutageSpool, SpoolSegment } from './outage-spool.js';
import { preparedFromPayload } from './spool-segment.js';

export interface SpoolDrainerOptions {
  /** How often an engaged spool tries the event store again. */
  retryIntervalMs: number;
  /** Spooled appends per append statement. */
  batchAppends: number;
}

const DEFAULTS: SpoolDrainerOptions = { retryIntervalMs: 500, batchAppends: 200 };

/**
 * Appends spooled events into the event store once it answers again: segment by segment, record by
 * record in the order they were spooled, each with the event ids it was given when the request ran. A
 * record whose events are stored already (the commit that seemed lost had landed, or a drain crashed
 * after appending and before deleting its segment) is found stored by those ids and costs nothing, so
 * draining again is always safe. A segment is deleted only after every record of it is stored.
 */
export class SpoolDrainer {
  private readonly logger = new Logger('SpoolDrainer');
  private readonly options: SpoolDrainerOptions;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  private waitingSince: number | null = null;

  constructor(
    private readonly store: SqlEventStore,
    private readonly spool: OutageSpool,
    options: Partial<SpoolDrainerOptions> = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  /** Stops retrying; resolves when a drain under way has finished its current statement. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /**
   * Drains until the spool is empty or the store fails again. Resolves true when everything spooled is
   * stored (and the spool's segments are gone).
   */
  async drain(): Promise<boolean> {
    while (this.spool.engaged && !this.stopped) {
      await this.spool.seal();
      const segments = this.spool.sealedSegments();
      if (segments.length === 0) {
        // Written meanwhile into a segment that the next seal closes.
        await nextEventLoopTurn();
        continue;
      }
      for (const segment of segments) await this.drainSegment(segment);
      // The store took a whole pass: new requests commit directly again, or under steady traffic the
      // spool would never run empty; only streams that still have records here keep coming here.
      this.spool.resumeDirect();
    }
    return !this.spool.engaged;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.tick().finally(() => {
        this.running = null;
        this.schedule(this.options.retryIntervalMs);
      });
    }, delayMs);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    if (!this.spool.engaged) return;
    try {
      const before = this.spool.spoolBytes();
      if (await this.drain()) {
        const waited = this.waitingSince === null ? '' : ` after ${Math.round((Date.now() - this.waitingSince) / 1000)} s`;
        this.logger.warn(`the event store answers again${waited}: the outage spool is drained (${before} bytes)`);
        this.waitingSince = null;
      }
    } catch (error) {
      if (!isConnectionLoss(error)) {
        this.logger.error(`draining the outage spool failed: ${(error as Error).message}`);
        return;
      }
      if (this.waitingSince === null) {
        this.waitingSince = Date.now();
        this.logger.warn(`the event store is unreachable (${describeDatabaseError(error)}): request events go to the outage spool until it returns`);
      }
    }
  }

  private async drainSegment(segment: SpoolSegment): Promise<void> {
    const scan = this.spool.read(segment);
    if (scan.tornTailBytes > 0) {
      this.logger.warn(`${segment.path}: ${scan.tornTailBytes} bytes at the end are an unfinished write (none of it was acknowledged); ignored`);
    }
    const appends: PreparedAppend[] = [];
    for (const payload of scan.payloads) {
      try {
        appends.push(preparedFromPayload(payload));
      } catch (error) {
        this.logger.error(`${segment.path}: a record that checks out is no append (${(error as Error).message}); kept in ${this.spool.keepRejected(payload)}`);
      }
    }
    for (let start = 0; start < appends.length; start += this.options.batchAppends) {
      const batch = appends.slice(start, start + this.options.batchAppends);
      // A lost connection throws out of here, leaving the segment in place: the next drain starts it again.
      const results = await this.store.appendPrepared(batch);
      results.forEach((result, index) => {
        if (!(result instanceof Error)) return;
        const kept = this.spool.keepRejected(batch[index].json);
        this.logger.error(`stream ${batch[index].streamId}: the event store refused spooled events (${result.message}); kept in ${kept}`);
      });
    }
    if (scan.corruptAt.length > 0) {
      const kept = this.spool.quarantine(segment);
      this.logger.error(
        `${segment.path}: damaged record(s) at byte offset(s) ${scan.corruptAt.join(', ')} with intact records after them; ` +
          `the intact records were drained and the file is kept as ${kept} for an operator`,
      );
      return;
    }
    this.spool.remove(segment);
  }
}
