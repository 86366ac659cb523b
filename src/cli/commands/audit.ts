import { createWriteStream, readFileSync } from 'node:fs';
import { once } from 'node:events';
import { ControlPlaneAudit } from '../../../modules/audit/control-plane-audit.js';
import { exportAudit } from '../../../modules/audit/audit-export.js';
import { type AuditReport, AuditScopeError, AuditVerifier, type CheckpointRecord, latestCheckpoint, NO_CHECKPOINT, parseCheckpoint, publicKeyProblem } from '../../../modules/audit/audit-verifier.js';
import { type CheckpointSigner, ed25519Verifier } from '../../../projections/audit-chain/index.js';
import { readEnvironment } from '../../config/environment.js';
import { openLogReader } from '../../log-reader.js';
import { ServerRefusedError, runningServer } from '../running-server.js';

/** One page of control-plane changes, as ControlPlaneAudit and `GET /admin/v1/audit` answer it. */
type ChangePage = Awaited<ReturnType<ControlPlaneAudit['list']>>;

export interface VerifyOptions {
  /** A checkpoint kept outside the database (the JSON `audit checkpoint` printed). */
  checkpointFile: string | null;
  /** Verify Ed25519 checkpoints with this public key instead of the configured signing key. */
  publicKeyFile: string | null;
  /** Start at the newest signed checkpoint instead of the first event. */
  sinceCheckpoint: boolean;
  json: boolean;
}

/** `switchyard audit verify`: exit 0 and OK, or exit 1 naming the first altered, missing or reordered position. */
export async function auditVerify(options: VerifyOptions): Promise<number> {
  if (options.sinceCheckpoint && options.checkpointFile) {
    process.stderr.write(`${new AuditScopeError().message.replace('"since: latest-checkpoint"', '--since-checkpoint')}\n`);
    return 2;
  }
  const since = options.sinceCheckpoint ? 'latest-checkpoint' as const : undefined;
  const environment = readEnvironment();
  const server = runningServer(environment);
  let report: AuditReport;
  let signer: { algorithm: string; keyId: string } | null;
  if (server) {
    const answer = await server.post<AuditReport & { signer: { algorithm: string; keyId: string } | null }>('/admin/v1/audit/verify', {
      ...(options.checkpointFile ? { checkpoint: readFileSync(options.checkpointFile, 'utf8') } : {}),
      ...(options.publicKeyFile ? { publicKeyPem: readFileSync(options.publicKeyFile, 'utf8') } : {}),
      ...(since ? { since } : {}),
    });
    ({ signer, ...report } = answer);
  } else {
    const platform = await openLogReader(environment);
    try {
      const local: CheckpointSigner | null = options.publicKeyFile ? ed25519Verifier(readFileSync(options.publicKeyFile, 'utf8')) : platform.auditSigner;
      const external = options.checkpointFile ? parseCheckpoint(readFileSync(options.checkpointFile, 'utf8')) : null;
      report = await new AuditVerifier(platform.database, local).verify({ external, since });
      signer = local;
    } finally {
      await platform.close();
    }
  }
  if (options.json) process.stdout.write(`${JSON.stringify(report)}\n`);
  else process.stdout.write(describe(report, signer));
  return report.ok ? 0 : 1;
}

function describe(report: AuditReport, signer: { algorithm: string; keyId: string } | null): string {
  const lines: string[] = [];
  if (report.ok) {
    const head = report.head ? `, head at sequence ${report.head.sequence} (position ${report.head.globalPosition}, hash ${report.head.hash})` : '';
    const since = report.since ? ` since the checkpoint at sequence ${report.since.sequence} (position ${report.since.globalPosition}; events before it not recomputed)` : '';
    lines.push(`audit chain OK: ${report.verifiedEvents} events verified against the log${since}${head}`);
  } else {
    const problem = report.problem!;
    lines.push(`audit chain FAILED (${problem.kind}) at global position ${problem.globalPosition ?? '?'}: ${problem.message}`);
    lines.push(`  ${report.verifiedEvents} events before it verified`);
  }
  if (report.pendingEvents) lines.push(`  ${report.pendingEvents} committed events are not chained yet (the projection is behind; they were recomputed)`);
  const latest = report.checkpoints.latest;
  lines.push(signer
    ? `  signed checkpoints: ${report.checkpoints.verified} verified (${signer.algorithm}, key ${signer.keyId})` +
      (latest ? `, latest at sequence ${latest.sequence} (position ${latest.globalPosition}, ${latest.signedAt})` : '')
    : `  signed checkpoints: ${report.checkpoints.verified} matched by hash; signatures NOT checked (no SWITCHYARD_AUDIT_SIGNING_KEY or --public-key)`);
  return `${lines.join('\n')}\n`;
}


/** `switchyard audit checkpoint`: the latest signed checkpoint as JSON, to keep somewhere the database's admins cannot edit. */
export async function auditCheckpoint(): Promise<number> {
  const environment = readEnvironment();
  const server = runningServer(environment);
  let latest: CheckpointRecord | null;
  if (server) {
    latest = await server.get<CheckpointRecord>('/admin/v1/audit/checkpoint').catch((error: unknown) => {
      if (error instanceof ServerRefusedError && error.code === 'no_checkpoint') return null;
      throw error;
    });
  } else {
    const platform = await openLogReader(environment);
    try {
      latest = await latestCheckpoint(platform.database);
    } finally {
      await platform.close();
    }
  }
  if (!latest) {
    process.stderr.write(`${NO_CHECKPOINT}\n`);
    return 1;
  }
  process.stdout.write(`${JSON.stringify(latest)}\n`);
  return 0;
}

/** `switchyard audit public-key`: the Ed25519 public key auditors verify checkpoints with. */
export async function auditPublicKey(): Promise<number> {
  const environment = readEnvironment();
  const server = runningServer(environment);
  if (server) {
    const answer = await server.get<{ publicKeyPem: string }>('/admin/v1/audit/public-key').catch((error: unknown) => {
      if (error instanceof ServerRefusedError && error.code === 'no_public_key') return error;
      throw error;
    });
    if (answer instanceof ServerRefusedError) {
      process.stderr.write(`${answer.message}\n`);
      return 1;
    }
    process.stdout.write(answer.publicKeyPem);
    return 0;
  }
  const platform = await openLogReader(environment);
  try {
    const problem = publicKeyProblem(platform.auditSigner);
    if (problem) {
      process.stderr.write(`${problem}\n`);
      return 1;
    }
    process.stdout.write(platform.auditSigner!.publicKeyPem()!);
    return 0;
  } finally {
    await platform.close();
  }
}

/** `switchyard audit export --from --to [--out FILE]`: NDJSON with hashes (docs/audit.md "Verifying an export offline"). */
export async function auditExport(options: { from?: number; to?: number; out: string | null }): Promise<number> {
  const environment = readEnvironment();
  const server = runningServer(environment);
  const output = options.out ? createWriteStream(options.out) : process.stdout;
  const write = async (text: string | Buffer) => {
    if (!output.write(text)) await once(output, 'drain');
  };
  let lines = 0;
  if (server) {
    const query = new URLSearchParams();
    if (options.from !== undefined) query.set('from', String(options.from));
    if (options.to !== undefined) query.set('to', String(options.to));
    await server.stream(`/admin/v1/audit/export?${query}`, async (chunk) => {
      for (const byte of chunk) if (byte === 0x0a) lines++;
      await write(chunk);
    });
  } else {
    const platform = await openLogReader(environment);
    try {
      for await (const line of exportAudit(platform.database, { from: options.from, to: options.to }, platform.auditSigner)) {
        await write(`${line}\n`);
        lines++;
      }
    } finally {
      await platform.close();
    }
  }
  if (options.out) {
    (output as NodeJS.WritableStream).end();
    await once(output, 'finish');
    process.stderr.write(`wrote ${lines} lines to ${options.out}\n`);
  }
  return 0;
}

/** `switchyard audit log`: control-plane changes with their actors, as JSON lines. */
export async function auditLog(options: { actor?: string; actions?: string[]; from?: Date; to?: Date; limit: number }): Promise<number> {
  const environment = readEnvironment();
  const server = runningServer(environment);
  const platform = server ? null : await openLogReader(environment);
  try {
    const audit = platform ? new ControlPlaneAudit(platform.database) : null;
    const page = (after: string | undefined, limit: number): Promise<ChangePage> => {
      if (audit) return audit.list({ ...options, after, limit });
      const query = new URLSearchParams({ limit: String(limit) });
      if (options.actor) query.set('actor', options.actor);
      if (options.actions) query.set('action', options.actions.join(','));
      if (options.from) query.set('from', options.from.toISOString());
      if (options.to) query.set('to', options.to.toISOString());
      if (after) query.set('after', after);
      return server!.get<ChangePage>(`/admin/v1/audit?${query}`);
    };
    let after: string | undefined;
    let printed = 0;
    while (printed < options.limit) {
      const changes = await page(after, Math.min(500, options.limit - printed));
      for (const change of changes.data) process.stdout.write(`${JSON.stringify(change)}\n`);
      printed += changes.data.length;
      if (changes.caughtUp) break;
      after = changes.next;
    }
    return 0;
  } finally {
    await platform?.close();
  }
}
