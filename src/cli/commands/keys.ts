import { CommandBus } from '@nestjs/cqrs';
import { NestFactory } from '@nestjs/core';
import { userInfo } from 'node:os';
import type { KeyScope } from '../../../events/api-key-events.js';
import { ApiKeyCommand } from '../../../modules/access/access.commands.js';
import { displayPrefix, generateApiKey, hashApiKey } from '../../../modules/access/api-key/key-format.js';
import { readEnvironment } from '../../config/environment.js';
import type { CommandOutcome } from '../../kernel/commands/command-executor.js';
import { randomBase62 } from '../../kernel/ids.js';
import type { DomainEvent } from '../../../events/event.js';
import { openPlatform, type Platform } from '../../platform.js';
import { installPublicationGuard } from '../../publication-guard.js';
import { CliModule } from '../cli.module.js';
import { DomainError } from '../../kernel/commands/decider.js';
import { writeOut } from '../output.js';
import { runningServer } from '../running-server.js';

export interface IssueOptions {
  tenant: string;
  id: string | null;
  scopes: KeyScope[];
  aliases: string[];
  expiresAt: string | null;
  limits: { rpm: number | null; tpm: number | null; maxConcurrency: number | null };
}

/**
 * `keys issue`: prints the new key on stdout, alone, exactly once (so `KEY=$(switchyard keys issue …)`
 * works); what was issued goes to stderr. Only the key's hash and display prefix are stored.
 */
export async function keysIssue(options: IssueOptions): Promise<number> {
  const keyId = options.id ?? `key-${randomBase62(12)}`;
  let key: string;
  const server = runningServer(readEnvironment());
  if (server) {
    // The server generates the key; it is in its answer and nowhere else.
    const issued = await server.post<{ key: string }>('/admin/v1/keys', {
      id: keyId, tenant: options.tenant, scopes: options.scopes, aliases: options.aliases, limits: options.limits,
      ...(options.expiresAt ? { expiresAt: options.expiresAt } : {}),
    });
    key = issued.key;
  } else {
    key = generateApiKey();
    const grant = { tenantId: options.tenant, scopes: options.scopes, aliases: options.aliases, limits: options.limits, expiresAt: options.expiresAt };
    await send(new ApiKeyCommand.Message({ type: 'IssueApiKey', keyId, hash: hashApiKey(key), prefix: displayPrefix(key), grant }, context()), (platform) => {
      const unknown = options.aliases.filter((alias) => platform.routing.state.aliases.get(alias)?.status !== 'published');
      if (unknown.length) throw new DomainError('unknown_alias', `No published alias ${unknown.map((a) => `'${a}'`).join(', ')}; publish it first or correct the name.`, 422);
    });
  }
  process.stderr.write(
    `Issued key ${keyId} (${displayPrefix(key)}) for tenant ${options.tenant}, scopes ${options.scopes.join(', ')}` +
      `${options.aliases.length ? `, aliases ${options.aliases.join(', ')}` : ''}${options.expiresAt ? `, expires ${options.expiresAt}` : ''}.\n` +
      `This is the only time the key is shown; Switchyard keeps only its hash.\n`,
  );
  await writeOut(`${key}\n`);
  return 0;
}

export async function keysRevoke(keyId: string, reason: string | null): Promise<number> {
  const server = runningServer(readEnvironment());
  if (server) await server.post(`/admin/v1/keys/${encodeURIComponent(keyId)}/revoke`, reason === null ? {} : { reason });
  else await send(new ApiKeyCommand.Message({ type: 'RevokeApiKey', keyId, reason }, context()));
  process.stdout.write(`Revoked key ${keyId}; every node refuses it within a second.\n`);
  return 0;
}

/**
 * `keys rotate ID [--overlap SECONDS]`: a new secret for the same key (same grant, spend and limits),
 * printed once on stdout; the previous secret keeps working for the overlap, or stops at once.
 */
export async function keysRotate(keyId: string, overlapSeconds: number): Promise<number> {
  const server = runningServer(readEnvironment());
  let key: string;
  let overlapUntil: string | null;
  if (server) {
    const rotated = await server.post<{ key: string; previousValidUntil: string | null }>(
      `/admin/v1/keys/${encodeURIComponent(keyId)}/rotate`, overlapSeconds > 0 ? { overlapSeconds } : {},
    );
    key = rotated.key;
    overlapUntil = rotated.previousValidUntil;
  } else {
    key = generateApiKey();
    overlapUntil = overlapSeconds > 0 ? new Date(Date.now() + overlapSeconds * 1000).toISOString() : null;
    await send(new ApiKeyCommand.Message({ type: 'RotateApiKeySecret', keyId, hash: hashApiKey(key), prefix: displayPrefix(key), overlapUntil }, context()));
  }
  process.stderr.write(
    `Rotated the secret of key ${keyId} (${displayPrefix(key)}); ` +
      `${overlapUntil ? `the previous secret works until ${overlapUntil}` : 'the previous secret stops working now'}.\n` +
      `This is the only time the new secret is shown; Switchyard keeps only its hash.\n`,
  );
  process.stdout.write(`${key}\n`);
  return 0;
}

function context() {
  return { now: new Date(), actor: `cli:${safeUser()}` };
}

function safeUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

async function send(message: object, check?: (platform: Platform) => void): Promise<CommandOutcome<DomainEvent>> {
  const platform: Platform = await openPlatform(readEnvironment(), { runDurable: false });
  try {
    installPublicationGuard(platform);
    await platform.runner.start();
    check?.(platform);
    const app = await NestFactory.createApplicationContext(CliModule.forRoot(platform), { logger: ['error', 'warn'] });
    try {
      return await app.get(CommandBus).execute(message);
    } finally {
      await app.close();
    }
  } finally {
    await platform.close();
  }
}
