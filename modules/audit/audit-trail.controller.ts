import { Readable } from 'node:stream';
import { Body, Controller, Get, HttpCode, Inject, Post, Query, Res, UseFilters, UseGuards, UsePipes } from '@nestjs/common';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import type { FastifyReply } from 'fastify';
import { type CheckpointSigner, ed25519Verifier } from '../../projections/audit-chain/index.js';
import { DATABASE, type Database } from '../../src/kernel/index.js';
import { AdminArea, AdminApiError, AdminExceptionFilter, AdminGuard, adminValidationPipe } from '../admin/index.js';
import { ExportRangeError, exportAudit } from './audit-export.js';
import { checkpointPage } from './checkpoint-list.js';
import { AUDIT_TRAIL_SETTINGS, type AuditTrailSettings } from './audit-trail-settings.js';
import { type AuditReport, AuditScopeError, AuditVerifier, latestCheckpoint, NO_CHECKPOINT, parseCheckpoint, publicKeyProblem } from './audit-verifier.js';

export class AuditVerifyDto {
  /** A checkpoint kept outside the database: the JSON `switchyard audit checkpoint` printed, as text. */
  @IsOptional() @IsString() @MaxLength(4096)
  checkpoint?: string;

  /** Verify Ed25519 checkpoints with this public key (PEM) instead of the node's signing key. */
  @IsOptional() @IsString() @MaxLength(4096)
  publicKeyPem?: string;

  /** `genesis` (default): every event. `latest-checkpoint`: only what came after the newest signed checkpoint. */
  @IsOptional() @IsIn(['genesis', 'latest-checkpoint'])
  since?: 'genesis' | 'latest-checkpoint';
}

/**
 * The hash-chained audit trail over the admin API — what `switchyard audit verify | export | checkpoint |
 * public-key` ask a server holding the embedded store (through its operator socket), and what an
 * auditor's tooling may call directly: verification against the log, the NDJSON export, the latest
 * signed checkpoint and the public key to verify it with.
 */
@AdminArea('audit')
@Controller('admin/v1/audit')
@UseGuards(AdminGuard)
@UseFilters(AdminExceptionFilter)
export class AuditTrailController {
  private readonly signer: CheckpointSigner | null;

  constructor(
    @Inject(DATABASE) private readonly database: Database,
    @Inject(AUDIT_TRAIL_SETTINGS) settings: AuditTrailSettings,
  ) {
    this.signer = settings.signer;
  }

  @Post('verify')
  // Verification reads the log and changes nothing: a read for the console's roles, though sent as POST.
  @AdminArea('audit', { access: 'read' })
  @HttpCode(200)
  @UsePipes(adminValidationPipe())
  async verify(@Body() body: AuditVerifyDto): Promise<AuditReport & { signer: { algorithm: string; keyId: string } | null }> {
    let signer: CheckpointSigner | null = this.signer;
    let external = null;
    try {
      if (body.publicKeyPem) signer = ed25519Verifier(body.publicKeyPem);
      if (body.checkpoint) external = parseCheckpoint(body.checkpoint);
    } catch (error) {
      throw new AdminApiError(400, 'validation_failed', `The request body is invalid: ${(error as Error).message}.`);
    }
    if (body.since === 'latest-checkpoint' && external) throw new AdminApiError(400, 'validation_failed', `The request body is invalid: ${new AuditScopeError().message}.`);
    const report = await new AuditVerifier(this.database, signer).verify({ external, since: body.since });
    return { ...report, signer: signer ? { algorithm: signer.algorithm, keyId: signer.keyId } : null };
  }

  /** NDJSON (`?from=&to=` global positions, inclusive): the format the offline verifier of docs/audit.md reads. */
  @Get('export')
  async export(@Query('from') from: string | undefined, @Query('to') to: string | undefined, @Res() reply: FastifyReply): Promise<void> {
    const range = { from: position('from', from), to: position('to', to) };
    const lines = exportAudit(this.database, range, this.signer);
    let first: IteratorResult<string>;
    try {
      first = await lines.next(); // a range error is a 400 before anything is sent
    } catch (error) {
      if (error instanceof ExportRangeError) throw new AdminApiError(400, 'invalid_range', `${error.message}.`);
      throw error;
    }
    async function* ndjson(): AsyncGenerator<string> {
      if (first.done) return;
      yield `${first.value}\n`;
      for await (const line of lines) yield `${line}\n`;
    }
    await reply.header('content-type', 'application/x-ndjson; charset=utf-8').header('cache-control', 'no-store').send(Readable.from(ndjson()));
  }

  /** Every signed checkpoint, newest first (`?before=<sequence>&limit=`, 1–200, default 50). */
  @Get('checkpoints')
  async checkpoints(@Query('before') before: string | undefined, @Query('limit') limit: string | undefined) {
    if (before !== undefined && before !== '' && !/^\d{1,15}$/.test(before)) {
      throw new AdminApiError(400, 'validation_failed', 'before must be a checkpoint sequence (the nextBefore of a previous page).');
    }
    const size = limit === undefined || limit === '' ? 50 : Number(limit);
    if (!Number.isInteger(size) || size < 1 || size > 200) throw new AdminApiError(400, 'validation_failed', 'limit must be an integer from 1 to 200.');
    return checkpointPage(this.database, { before: before ? Number(before) : undefined, limit: size });
  }

  @Get('checkpoint')
  async checkpoint() {
    const latest = await latestCheckpoint(this.database);
    if (!latest) throw new AdminApiError(404, 'no_checkpoint', NO_CHECKPOINT);
    return latest;
  }

  @Get('public-key')
  publicKey() {
    const signer = this.signer;
    const problem = publicKeyProblem(signer);
    if (problem || !signer) throw new AdminApiError(404, 'no_public_key', problem ?? 'SWITCHYARD_AUDIT_SIGNING_KEY is not set.');
    return { algorithm: signer.algorithm, keyId: signer.keyId, publicKeyPem: signer.publicKeyPem() };
  }
}

function position(name: string, value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^\d{1,15}$/.test(value)) throw new AdminApiError(400, 'validation_failed', `${name} must be a global position (a non-negative integer).`);
  return Number(value);
}
