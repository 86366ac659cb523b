import { createWriteStream, readFileSync } from 'node:fs';
import { once } from 'node:events';
import { ControlPlaneAudit } from '../../../modules/audit/control-plane-audit.js';
import { exportAudit } from '../../../modules/audit/audit-export.js';
import { type AuditReport, AuditVerifier, type CheckpointRecord, checkpointRecord } from '../../../modules/audit/audit-verifier.js';
import { type CheckpointSigner, ed25519Verifier } from '../../../projections/audit-chain/checkpoint-signer.js';
import { readEnvironment } from '../../config/environment.js';
import { openPlatform } from '../../platform.js';

export interface VerifyOptions {
  /** A checkpoint kept outside the database (the JSON `audit checkpoint` printed). */
  checkpointFile: string | null;
  /** Verify Ed25519 checkpoints with this public key instead of the configured signing key. */
  publicKeyFile: string | null;
  json: boolean;
}

/** `switchyard audit verify`: exit 0 and OK, or exit 1 naming the first altered, missing or reordered position. */
export async function auditVerify(options: VerifyOptions): Promise<number> {
  const platform = await openPlatform(readEnvironment(), { runDurable: false });
  try {
    const signer: CheckpointSigner | null = options.publicKeyFile ? ed25519Verifier(readFileSync(options.publicKeyFile, 'utf8')) : platform.auditSigner;
    const external = options.checkpointFile ? parseCheckpoint(readFileSync(options.checkpointFile, 'utf8')) : null;
    const report = await new AuditVerifier(platform.database, signer).verify({ external });
    if (options.json) process.stdout.write(`${JSON.stringify(report)}\n`);
    else process.stdout.write(describe(report, signer));
    return report.ok ? 0 : 1;
  } finally {
    await platform.close();
  }
}

function describe(report: AuditReport, signer: CheckpointSigner | null): string {
  const lines: string[] = [];
  if (report.ok) {
    const head = report.head ? `, head at sequence ${report.head.sequence} (position ${report.head.globalPosition}, hash ${report.head.hash})` : '';
    lines.push(`audit chain OK: ${report.verifiedEvents} events verified against the log${head}`);
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

function parseCheckpoint(text: string): CheckpointRecord {
  const value = JSON.parse(text) as Record<string, unknown>;
  const fields = ['sequence', 'globalPosition', 'hash', 'algorithm', 'keyId', 'signature'];
  for (const field of fields) if (value[field] === undefined) throw new Error(`the checkpoint file lacks "${field}"`);
  return {
    sequence: Number(value.sequence), globalPosition: Number(value.globalPosition), hash: String(value.hash), algorithm: String(value.algorithm),
    keyId: String(value.keyId), signature: String(value.signature), signedAt: String(value.signedAt ?? ''),
  };
}

/** `switchyard audit checkpoint`: the latest signed checkpoint as JSON, to keep somewhere the database's admins cannot edit. */
export async function auditCheckpoint(): Promise<number> {
  const platform = await openPlatform(readEnvironment(), { runDurable: false });
  try {
    const rows = await platform.database.query<Parameters<typeof checkpointRecord>[0]>(
      `SELECT k.sequence::text AS sequence, k.global_position::text AS global_position, k.hash, k.algorithm, k.key_id, k.signature, k.signed_at
       FROM audit_checkpoints k ORDER BY k.sequence DESC LIMIT 1`,
    );
    if (!rows[0]) {
      process.stderr.write('No signed checkpoint yet (set SWITCHYARD_AUDIT_SIGNING_KEY on the serving nodes).\n');
      return 1;
    }
    process.stdout.write(`${JSON.stringify(checkpointRecord(rows[0]))}\n`);
    return 0;
  } finally {
    await platform.close();
  }
}

/** `switchyard audit public-key`: the Ed25519 public key auditors verify checkpoints with. */
export async function auditPublicKey(): Promise<number> {
  const platform = await openPlatform(readEnvironment(), { runDurable: false });
  try {
    const pem = platform.auditSigner?.publicKeyPem() ?? null;
    if (!pem) {
      process.stderr.write(platform.auditSigner
        ? 'The audit signing key is an HMAC key: auditors verify checkpoints with the key itself.\n'
        : 'SWITCHYARD_AUDIT_SIGNING_KEY is not set.\n');
      return 1;
    }
    process.stdout.write(pem);
    return 0;
  } finally {
    await platform.close();
  }
}

/** `switchyard audit export --from --to [--out FILE]`: NDJSON with hashes (see the README for offline verification). */
export async function auditExport(options: { from?: number; to?: number; out: string | null }): Promise<number> {
  const platform = await openPlatform(readEnvironment(), { runDurable: false });
  const output = options.out ? createWriteStream(options.out) : process.stdout;
  try {
    let lines = 0;
    for await (const line of exportAudit(platform.database, { from: options.from, to: options.to }, platform.auditSigner)) {
      if (!output.write(`${line}\n`)) await once(output, 'drain');
      lines++;
    }
    if (options.out) {
      (output as NodeJS.WritableStream).end();
      await once(output, 'finish');
      process.stderr.write(`wrote ${lines} lines to ${options.out}\n`);
    }
    return 0;
  } finally {
    await platform.close();
  }
}

/** `switchyard audit log`: control-plane changes with their actors, as JSON lines. */
export async function auditLog(options: { actor?: string; actions?: string[]; from?: Date; to?: Date; limit: number }): Promise<number> {
  const platform = await openPlatform(readEnvironment(), { runDurable: false });
  try {
    const audit = new ControlPlaneAudit(platform.database);
    let after: string | undefined;
    let printed = 0;
    while (printed < options.limit) {
      const page = await audit.list({ ...options, after, limit: Math.min(500, options.limit - printed) });
      for (const change of page.data) process.stdout.write(`${JSON.stringify(change)}\n`);
      printed += page.data.length;
      if (page.caughtUp) break;
      after = page.next;
    }
    return 0;
  } finally {
    await platform.close();
  }
}
