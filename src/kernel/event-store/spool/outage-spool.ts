import { Logger } from '@nestjs/common';
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { join } from 'node:path';
import { DataDirLock } from '../../database/data-dir-lock.js';
import { nextEventLoopTurn } from '../../event-loop-turn.js';
import type { PreparedAppend } from '../prepared-append.js';
import { encodeRecord, type SegmentScan, scanSegment } from './spool-segment.js';
import type { SpoolSettings } from './spool-settings.js';

/** The spool cannot take an append without going over its bound: the request must be refused, not answered. */
export class SpoolFullError extends Error {
  override readonly name = 'SpoolFullError';
  constructor(readonly maxBytes: number) {
    super(`the event store is unreachable and the outage spool is full (${maxBytes} bytes)`);
  }
}

interface PendingWrite {
  records: Buffer[];
  bytes: number;
  resolve: () => void;
  reject: (error: Error) => void;
}

/** A segment file of this spool, in drain order. */
export interface SpoolSegment {
  readonly path: string;
  bytes: number;
}

const SEGMENT_PATTERN = /^segment-(\d{12})\.log$/;
/** Slots (spool directories of one event store) held by this process: a second gateway in one process takes another. */
const heldSlots = new Set<string>();

/**
 * The local write-ahead spool of request events during a PostgreSQL outage (DESIGN §7). Appends that
 * cannot reach the database are written here — segmented files of checksummed records, one fsync per
 * batch — and the spool's drainer appends them into PostgreSQL when it returns, with their pinned ids.
 *
 * Each serving process holds a slot of its own, `<directory>/<store key>/<n>`, locked by a pid file, so
 * workers of one node and several nodes on one machine never share files; the store key keeps the
 * events of one event store away from any other's. A slot whose process died is taken over, at open, by
 * the next process that spools for that store, which drains what it left.
 */
export class OutageSpool {
  private readonly logger = new Logger('OutageSpool');
  private readonly segments: SpoolSegment[] = [];
  private active: { handle: FileHandle; path: string; bytes: number } | null = null;
  private nextSequence: number;
  private totalBytes: number;
  private pending: PendingWrite[] = [];
  private pendingBytes = 0;
  private flushing: Promise<void> | null = null;
  /** The store answers again and new appends go to it directly, except for streams that still have records here. */
  private bypass = false;
  /** Streams with records spooled by this process and not yet drained (their next appends must follow them). */
  private readonly streams = new Set<string>();
  /** The last append offered did not fit, and nothing has been drained since: requests are being refused. */
  private refusing = false;

  private constructor(
    readonly slot: string,
    private readonly settings: SpoolSettings,
    private readonly locks: DataDirLock[],
    inherited: SpoolSegment[],
  ) {
    for (const segment of inherited) this.segments.push(segment);
    const own = listSegments(slot);
    for (const segment of own) if (!this.segments.some((s) => s.path === segment.path)) this.segments.push(segment);
    this.totalBytes = this.segments.reduce((sum, segment) => sum + segment.bytes, 0);
    this.nextSequence = 1 + Math.max(0, ...own.map((segment) => sequenceOf(segment.path)));
  }

  /**
   * The bytes spooled for `storeKey` in every slot, read without taking any: answered requests that are not
   * in that store's log yet (a process that starts for the store drains them).
   */
  static spooledBytes(settings: SpoolSettings, storeKey: string): number {
    const root = join(settings.directory, storeKey);
    let slots: string[];
    try {
      slots = readdirSync(root).filter((name) => /^\d+$/.test(name));
    } catch {
      return 0;
    }
    return slots.reduce((sum, name) => sum + listSegments(join(root, name)).reduce((bytes, segment) => bytes + segment.bytes, 0), 0);
  }

  /** Takes a free slot for `storeKey` and adopts what dead processes left in the others. */
  static open(settings: SpoolSettings, storeKey: string): OutageSpool {
    const root = join(settings.directory, storeKey);
    mkdirSync(root, { recursive: true, mode: 0o700 });
    const locks: DataDirLock[] = [];
    let slot: string | null = null;
    for (let n = 0; slot === null; n++) {
      const candidate = join(root, String(n));
      if (heldSlots.has(candidate)) continue;
      mkdirSync(candidate, { recursive: true, mode: 0o700 });
      const lock = DataDirLock.tryAcquire(candidate);
      if (!lock) continue;
      locks.push(lock);
      heldSlots.add(candidate);
      slot = candidate;
    }
    // Orphans: slots no live process holds that still have segments (a worker count that went down, a crash).
    const inherited: SpoolSegment[] = [];
    for (const name of readdirSync(root)) {
      const candidate = join(root, name);
      if (candidate === slot || heldSlots.has(candidate) || !/^\d+$/.test(name)) continue;
      if (listSegments(candidate).length === 0) continue;
      const lock = DataDirLock.tryAcquire(candidate);
      if (!lock) continue;
      locks.push(lock);
      heldSlots.add(candidate);
      inherited.push(...listSegments(candidate));
    }
    const spool = new OutageSpool(slot, settings, locks, inherited);
    if (spool.totalBytes > 0) {
      spool.logger.warn(`${spool.segments.length} spooled segment(s) (${spool.totalBytes} bytes) from an earlier outage will be drained into the event store`);
    }
    return spool;
  }

  /**
   * Holds records not yet drained (on disk, or being written): while it does, every new append comes
   * here too, so the log receives a node's requests in the order they were answered.
   */
  get engaged(): boolean {
    return this.totalBytes > 0 || this.pending.length > 0 || this.flushing !== null;
  }

  /**
   * Whether an append to this stream must come here: while the spool holds anything, unless the drainer
   * has seen the store answer again (then only appends to streams that still have records here, so a
   * stream's events stay in order; a strict request's RequestAdmitted may be spooled, its rest not yet).
   */
  takes(streamId: string): boolean {
    return this.engaged && (!this.bypass || this.streams.has(streamId));
  }

  /** True while the store answers again and only the backlog is left to drain. */
  get bypassing(): boolean {
    return this.bypass && this.engaged;
  }

  /** The drainer has put a whole pass of segments into the store: new appends may go to it directly. */
  resumeDirect(): void {
    if (this.engaged) this.bypass = true;
  }

  /** An append lost its connection again: everything comes here until the next drain. */
  engage(): void {
    this.bypass = false;
  }

  /** Bytes spooled and not yet drained (the metric of the spool's depth). */
  spoolBytes(): number {
    return this.totalBytes + this.pendingBytes;
  }

  get maxBytes(): number {
    return this.settings.maxBytes;
  }

  /**
   * Refusing requests: an append did not fit under the bound and no segment has been drained since (or
   * the bound is reached exactly). Its room is judged by what was refused, not by bytes alone: a spool
   * 200 bytes short of its bound refuses every request whose events take more.
   */
  get full(): boolean {
    return this.refusing || this.spoolBytes() >= this.settings.maxBytes;
  }

  /**
   * Writes the appends as one batch (records of one fsync with whatever else is queued now); resolves
   * once they are on disk. Refuses all of them when they would take the spool over its bound.
   */
  write(appends: readonly PreparedAppend[]): Promise<void> {
    let records: Buffer[];
    try {
      records = appends.map((append) => encodeRecord(append.json));
    } catch (error) {
      return Promise.reject(error as Error);
    }
    const bytes = records.reduce((sum, record) => sum + record.length, 0);
    if (this.totalBytes + this.pendingBytes + bytes > this.settings.maxBytes) {
      this.refusing = true;
      return Promise.reject(new SpoolFullError(this.settings.maxBytes));
    }
    this.refusing = false;
    for (const append of appends) this.streams.add(append.streamId);
    return new Promise((resolve, reject) => {
      this.pending.push({ records, bytes, resolve, reject });
      this.pendingBytes += bytes;
      this.flushing ??= nextEventLoopTurn().then(() => this.flush());
    });
  }

  /**
   * Closes the segment being written, so that everything spooled until now is in sealed segments the
   * drainer may read and delete; the next write starts a new one.
   */
  async seal(): Promise<void> {
    while (this.flushing) await this.flushing;
    await this.closeActive();
  }

  /** Sealed segments, oldest first. */
  sealedSegments(): SpoolSegment[] {
    return this.segments.filter((segment) => segment.path !== this.active?.path);
  }

  read(segment: SpoolSegment): SegmentScan {
    return scanSegment(readFileSync(segment.path));
  }

  /** A drained segment: deleted, and the deletion made durable, so a restart does not drain it again. */
  remove(segment: SpoolSegment): void {
    rmSync(segment.path, { force: true });
    syncDirectory(dirOf(segment.path));
    this.forget(segment);
  }

  /** A segment damaged in the middle: kept, renamed, for an operator; no longer counted or drained. */
  quarantine(segment: SpoolSegment): string {
    const kept = `${segment.path}.corrupt`;
    renameSync(segment.path, kept);
    syncDirectory(dirOf(segment.path));
    this.forget(segment);
    return kept;
  }

  /** Keeps a record the event store refused (its bytes, in the same record format) next to the segments. */
  keepRejected(payload: string): string {
    const path = join(this.slot, 'rejected.log');
    const fd = openSync(path, 'a', 0o600);
    try {
      writeSync(fd, encodeRecord(payload));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    return path;
  }

  async close(): Promise<void> {
    await this.seal();
    for (const lock of this.locks) lock.release();
    for (const lock of this.locks) heldSlots.delete(dirOf(lock.path));
  }

  private forget(segment: SpoolSegment): void {
    const index = this.segments.findIndex((s) => s.path === segment.path);
    if (index === -1) return;
    this.totalBytes -= this.segments[index].bytes;
    this.segments.splice(index, 1);
    this.refusing = false;
    this.settleIfEmpty();
  }

  /** Nothing left: the next outage starts afresh. */
  private settleIfEmpty(): void {
    if (this.engaged) return;
    this.bypass = false;
    this.streams.clear();
  }

  private async flush(): Promise<void> {
    try {
      while (this.pending.length > 0) {
        const batch = this.pending;
        this.pending = [];
        const bytes = batch.reduce((sum, write) => sum + write.bytes, 0);
        try {
          await this.writeBatch(Buffer.concat(batch.flatMap((write) => write.records), bytes));
          this.pendingBytes -= bytes;
          for (const write of batch) write.resolve();
        } catch (error) {
          this.pendingBytes -= bytes;
          const failure = error instanceof Error ? error : new Error(String(error));
          this.logger.error(`the outage spool could not write ${batch.length} append(s): ${failure.message}`);
          for (const write of batch) write.reject(failure);
        }
      }
    } finally {
      this.flushing = null;
      this.settleIfEmpty(); // a batch that failed to be written leaves nothing behind
    }
  }

  private async writeBatch(data: Buffer): Promise<void> {
    if (this.active && this.active.bytes >= this.settings.segmentBytes) await this.closeActive();
    const active = this.active ?? (await this.openSegment());
    const before = active.bytes;
    try {
      for (let written = 0; written < data.length; ) {
        const { bytesWritten } = await active.handle.write(data, written, data.length - written);
        written += bytesWritten;
      }
      await active.handle.datasync();
    } catch (error) {
      // Whatever part reached the file must not sit in front of later records (it would read as damage
      // mid-file): cut it off and start the next batch in a new segment.
      await active.handle.truncate(before).catch(() => undefined);
      await this.closeActive();
      throw error;
    }
    active.bytes += data.length;
    this.totalBytes += data.length;
    const segment = this.segments.find((s) => s.path === active.path);
    if (segment) segment.bytes = active.bytes;
  }

  private async openSegment(): Promise<NonNullable<OutageSpool['active']>> {
    const path = join(this.slot, `segment-${String(this.nextSequence++).padStart(12, '0')}.log`);
    const handle = await open(path, 'wx', 0o600);
    syncDirectory(this.slot); // the new name must survive a crash along with its first fsynced records
    this.active = { handle, path, bytes: 0 };
    this.segments.push({ path, bytes: 0 });
    return this.active;
  }

  private async closeActive(): Promise<void> {
    const active = this.active;
    if (!active) return;
    this.active = null;
    await active.handle.close().catch(() => undefined);
    if (active.bytes === 0) {
      rmSync(active.path, { force: true });
      this.forget({ path: active.path, bytes: 0 });
    }
  }
}

function listSegments(dir: string): SpoolSegment[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((name) => SEGMENT_PATTERN.test(name))
    .sort()
    .map((name) => ({ path: join(dir, name), bytes: statSync(join(dir, name)).size }));
}

function sequenceOf(path: string): number {
  const match = SEGMENT_PATTERN.exec(path.slice(path.lastIndexOf('/') + 1));
  return match ? Number(match[1]) : 0;
}

function dirOf(path: string): string {
  return path.slice(0, path.lastIndexOf('/'));
}

function syncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
