import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { AuditVerifier } from '../../modules/audit/audit-verifier.js';
import type { Database, SqlExecutor } from '../kernel/database/database.js';
import { formatPosition } from '../kernel/event-store/log-position.js';
import { nextTransactionId } from '../kernel/event-store/transaction-counter.js';
import type { ControlPlaneState } from '../../projections/control-plane/index.js';
import { describeControlPlane } from './control-plane-fold.js';
import { catchUpReadModels } from './durable-read-models.js';
import { type LogExtent, continuePositions, copyLog, copyUnrebuildableState, logExtent } from './log-copy.js';
import { readMigrationMarker, removeMigrationMarker, writeMigrationMarker } from './migration-marker.js';
import { writeMovedMark } from './moved-store-mark.js';
import { auditChainHead, ledgerByTenantDay, ledgerDigest, spendByTenant, spendDigest, unrebuildableDigest, type GroupLine, type TableDigest } from './read-model-digest.js';
import { MigrationRefusedError, type OpenedStore, type StoreEndpoint, endpointLabel, openEndpoint, refuseIfServed, storeIdentity } from './store-endpoint.js';
import { advanceTransactionCounter } from './transaction-counter-advance.js';

/** The tables a Switchyard store keeps its state in: a target with a row in any of them is not empty. */
const SWITCHYARD_TABLES = ['events', 'admin_tokens', 'audit_chain', 'audit_checkpoints', 'cost_ledger', 'tenant_spend', 'request_summaries', 'projection_checkpoints', 'projection_halts'];

/** Events per copied page (one target transaction each). */
const DEFAULT_PAGE = 5000;

export interface MigrationOptions {
  source: StoreEndpoint;
  target: StoreEndpoint;
  pageSize?: number;
  /** A phase begins (a line for the operator). */
  onPhase(message: string): void;
  /** Progress of the current phase. */
  onProgress(done: number, total: number): void;
}

/** One comparison between source and target. */
export interface VerificationCheck {
  name: string;
  ok: boolean;
  source: string;
  target: string;
  /** Where they first differ, when they do. */
  detail?: string;
}

export interface MigrationReport {
  ok: boolean;
  source: string;
  target: string;
  /** A previous, interrupted run into the same target was resumed. */
  resumed: boolean;
  /** The embedded source now refuses every process that would open it (moved-store-mark.ts). */
  sourceMarkedMoved: boolean;
  events: number;
  streams: number;
  lastPosition: string | null;
  /** Events this run copied (the rest were there from the interrupted run). */
  copiedNow: number;
  /** Transaction ids used up so that the target's counter passes the log's. */
  transactionIdsTaken: number;
  adminTokens: number;
  auditCheckpoints: number;
  seconds: number;
  checks: VerificationCheck[];
}

/**
 * `switchyard migrate`: copies a store's whole log and the state the log cannot rebuild into an empty target,
 * rebuilds the durable read models there, and compares them with the source's. See docs/operations.md
 * ("Moving from the embedded store to PostgreSQL").
 */
export async function migrateStore(options: MigrationOptions): Promise<MigrationReport> {
  const started = Date.now();
  const { source: sourceEndpoint, target: targetEndpoint } = options;
  if (sourceEndpoint.kind === 'pglite' && targetEndpoint.kind === 'pglite' && sameDirectory(sourceEndpoint.dataDir, targetEndpoint.dataDir)) {
    throw new MigrationRefusedError(`The target is the source (${endpointLabel(sourceEndpoint)}): name another data directory.`);
  }
  await refuseIfServed(sourceEndpoint);
  const source = await openEndpoint(sourceEndpoint);
  try {
    // The source's schema and read models are brought up to date, as its server's next start would: the
    // comparison is with the read models of its whole log.
    await source.applySchema();
    await refuseHalted(source);
    const sourceIdentity = await storeIdentity(source);
    const target = await openEndpoint(targetEndpoint);
    try {
      if ((await storeIdentity(target)) === sourceIdentity) {
        throw new MigrationRefusedError(`The target is the source (${endpointLabel(targetEndpoint)} is the database the log is read from): name an empty database.`);
      }
      const extent = await logExtent(source.database);
      let sourceControlPlane: ControlPlaneState | null = null;
      if (extent.last && extent.last.transactionId >= (await nextTransactionId(source.database))) {
        // A log restored behind its server's counter (transaction-counter.ts): its readers cannot see it, so its
        // read models stay as they were restored, and the target's are compared with those.
        options.onPhase(`The source's log is ahead of its server's transaction counter (restored from a dump): its read models are compared as they were restored`);
      } else {
        options.onPhase(`Bringing the source's read models up to date (${endpointLabel(sourceEndpoint)})`);
        sourceControlPlane = await catchUpReadModels(source.database, () => undefined);
      }
      const logIdentity = `log:${extent.firstEventId ?? 'empty'}`;
      const resumed = await claimTarget(target, logIdentity, endpointLabel(sourceEndpoint));
      await target.applySchema();
      let transactionIdsTaken = 0;
      if (extent.last) {
        options.onPhase(`Moving the target's transaction counter past the log's newest transaction (${extent.last.transactionId})`);
        transactionIdsTaken = await advanceTransactionCounter(target.database, extent.last.transactionId, options.onProgress);
      }
      const kept = await copyUnrebuildableState(source.database, target.database);
      options.onPhase(`Copying ${extent.events.toLocaleString('en-US')} events${resumed ? ' (resuming after the events already copied)' : ''}`);
      const before = (await logExtent(target.database)).events;
      options.onProgress(before, extent.events);
      const copiedNow = await copyLog(source.database, target.database, options.pageSize ?? DEFAULT_PAGE, ({ copied }) => options.onProgress(before + copied, extent.events));
      await continuePositions(source.database, target.database);
      options.onPhase('Rebuilding the cost ledger, tenant spend and the audit chain in the target');
      const goal = extent.last?.globalPosition ?? 0;
      const targetControlPlane = await catchUpReadModels(target.database, (position) => options.onProgress(position, goal));
      options.onProgress(goal, goal);
      options.onPhase('Verifying the target against the source');
      const checks = await verify(source.database, target.database, extent);
      // What a node starting on each would fold into its routing snapshot and key index. A restored source's
      // readers cannot see its log (above), so there it is not folded; the chain checks cover its events.
      if (sourceControlPlane) checks.push(compare('control plane (routing snapshot, key index)', describeControlPlane(sourceControlPlane), describeControlPlane(targetControlPlane)));
      const ok = checks.every((check) => check.ok);
      // Moving the embedded store (the default every process falls back to without DATABASE_URL) to PostgreSQL
      // leaves it marked, so that no command writes to it by mistake; a copy into a data directory (a laptop copy
      // of a database) leaves its source as it is. Marked before the target's own mark goes: should writing it
      // fail, the target still says its migration is unfinished, and the same command run again completes both.
      const sourceMarkedMoved = ok && sourceEndpoint.kind === 'pglite' && targetEndpoint.kind === 'postgres';
      if (sourceMarkedMoved) {
        writeMovedMark(sourceEndpoint.dataDir, { to: endpointLabel(targetEndpoint), movedAt: new Date().toISOString(), lastPosition: extent.last ? formatPosition(extent.last) : null });
      }
      if (ok) await removeMigrationMarker(target.database);
      return {
        ok, source: endpointLabel(sourceEndpoint), target: endpointLabel(targetEndpoint), resumed, sourceMarkedMoved,
        events: extent.events, streams: extent.streams, lastPosition: extent.last ? formatPosition(extent.last) : null,
        copiedNow, transactionIdsTaken, adminTokens: kept.admin_tokens, auditCheckpoints: kept.audit_checkpoints,
        seconds: (Date.now() - started) / 1000, checks,
      };
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
}

function sameDirectory(a: string, b: string): boolean {
  const real = (path: string) => {
    try {
      return realpathSync(path);
    } catch {
      return resolve(path);
    }
  };
  return real(a) === real(b);
}

/** A halted projection would halt again in the target at the same event: it is resolved in the source first. */
async function refuseHalted(source: OpenedStore): Promise<void> {
  const halts = await source.database.query<{ name: string; global_position: string; error: string }>(
    `SELECT name, global_position::text AS global_position, error FROM projection_halts ORDER BY name`,
  );
  if (halts.length === 0) return;
  const listed = halts.map((halt) => `${halt.name} at global position ${halt.global_position} (${halt.error})`).join('; ');
  throw new MigrationRefusedError(
    `A projection of the source is halted: ${listed}. Resolve it first (docs/operations.md, "When a projection halts"; switchyard projections resume NAME), then migrate.`,
  );
}

/**
 * Takes the target for this log, or finds it already taken by an interrupted run of the same migration
 * (true: resumed). Refuses a target that holds anything of Switchyard's without a marker — or with another
 * log's — and says what it found; such a target is left as it was.
 */
async function claimTarget(target: OpenedStore, logIdentity: string, sourceLabel: string): Promise<boolean> {
  const marker = await readMigrationMarker(target.database);
  if (marker) {
    if (marker.source === logIdentity) return true;
    throw new MigrationRefusedError(
      `${endpointLabel(target.endpoint)} holds part of another log: a switchyard migrate from ${marker.sourceLabel}, started ${marker.startedAt}, has not finished there. ` +
        `Run that migration again to complete it, or use another empty database.`,
    );
  }
  const found = await switchyardRows(target.database);
  if (found.length > 0) {
    throw new MigrationRefusedError(
      `${endpointLabel(target.endpoint)} is not empty: ${found.join(', ')}. switchyard migrate only copies into an empty database; nothing was changed.`,
    );
  }
  await writeMigrationMarker(target.database, logIdentity, sourceLabel);
  return false;
}

/** `events: 1,234 rows`, for each Switchyard table that exists and has rows. */
async function switchyardRows(executor: SqlExecutor): Promise<string[]> {
  const found: string[] = [];
  for (const table of SWITCHYARD_TABLES) {
    const [exists] = await executor.query<{ present: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS present`, [table]);
    if (!exists?.present) continue;
    const [count] = await executor.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${table}`);
    const rows = Number(count.n);
    if (rows > 0) found.push(`${table}: ${rows.toLocaleString('en-US')} row${rows === 1 ? '' : 's'}`);
  }
  return found;
}

async function verify(source: Database, target: Database, extent: LogExtent): Promise<VerificationCheck[]> {
  const checks: VerificationCheck[] = [];
  const targetExtent = await logExtent(target);
  const position = (e: LogExtent) => (e.last ? formatPosition(e.last) : 'none');
  checks.push(compare('events', `${extent.events} in ${extent.streams} streams`, `${targetExtent.events} in ${targetExtent.streams} streams`));
  checks.push(compare('last position (transaction:position)', position(extent), position(targetExtent)));
  const [sourceHead, targetHead] = [await auditChainHead(source), await auditChainHead(target)];
  const head = (h: typeof sourceHead) => (h ? `sequence ${h.sequence}, position ${h.globalPosition}, hash ${h.hash}` : 'empty');
  checks.push(compare('audit chain head', head(sourceHead), head(targetHead)));
  // The rebuilt chain recomputed from the copied events, and against every copied signed checkpoint.
  const report = await new AuditVerifier(target, null).verify();
  checks.push({
    name: 'audit verify (target)', ok: report.ok && report.pendingEvents === 0,
    source: '-', target: report.ok ? `OK: ${report.verifiedEvents} events, ${report.checkpoints.verified} signed checkpoints matched` : `FAILED: ${report.problem?.message}`,
  });
  checks.push(compareDigests('cost ledger', await ledgerDigest(source), await ledgerDigest(target), () => Promise.all([ledgerByTenantDay(source), ledgerByTenantDay(target)])));
  checks.push(compareDigests('tenant spend', await spendDigest(source), await spendDigest(target), () => Promise.all([spendByTenant(source), spendByTenant(target)])));
  checks.push(compareDigests('admin tokens and signed checkpoints', await unrebuildableDigest(source), await unrebuildableDigest(target), null));
  return await finishDetails(checks);
}

function compare(name: string, source: string, target: string): VerificationCheck {
  return { name, ok: source === target, source, target };
}

/** Per-group lines of both sides, fetched only when the digests differ. */
type Breakdown = (() => Promise<[GroupLine[], GroupLine[]]>) | null;

const pendingBreakdowns = new WeakMap<VerificationCheck, Breakdown>();

function compareDigests(name: string, source: TableDigest, target: TableDigest, breakdown: Breakdown): VerificationCheck {
  const describe = (d: TableDigest) => `rows ${d.rows}, ${Object.entries(d.sums).map(([k, v]) => `${k} ${v}`).join(', ')}, md5 ${d.digest}`;
  const check = compare(name, describe(source), describe(target));
  if (!check.ok) pendingBreakdowns.set(check, breakdown);
  return check;
}

/** Names the first tenant and day (or period) whose lines differ, for each failed digest check. */
async function finishDetails(checks: VerificationCheck[]): Promise<VerificationCheck[]> {
  for (const check of checks) {
    const breakdown = pendingBreakdowns.get(check);
    if (!breakdown) continue;
    const [source, target] = await breakdown();
    const keys = [...new Set([...source, ...target].map((line) => line.group))].sort();
    const line = (lines: GroupLine[], key: string) => lines.find((l) => l.group === key);
    const first = keys.find((key) => JSON.stringify(line(source, key)) !== JSON.stringify(line(target, key)));
    if (first) {
      const show = (l: GroupLine | undefined) => (l ? `${l.rows} rows, ${l.sum}` : 'nothing');
      check.detail = `first difference at ${first}: source ${show(line(source, first))}, target ${show(line(target, first))}`;
    } else {
      check.detail = 'the totals per group agree; a row differs within one';
    }
  }
  return checks;
}
