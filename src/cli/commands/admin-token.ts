import pg from 'pg';
import { userInfo } from 'node:os';
import { ADMIN_TOKEN_STREAM } from '../../../events/admin-token-events.js';
import { resetAdminTokens } from '../../../modules/admin/admin-tokens.js';
import { readEnvironment } from '../../config/environment.js';
import { DataDirLock } from '../../kernel/database/data-dir-lock.js';
import { openPlatform } from '../../platform.js';

/**
 * `switchyard admin-token reset`: offline recovery of the admin API. Revokes every stored admin token,
 * issues a new one and prints it once on stdout (what was done goes to stderr). Servers load the tokens
 * when they start, so it refuses while one runs: a reset it could not reach would leave the old token
 * working there.
 */
export async function adminTokenReset(): Promise<number> {
  const environment = readEnvironment();
  if (environment.adminToken) {
    process.stderr.write('ADMIN_TOKEN is set: servers use that token and ignore the stored ones. Change ADMIN_TOKEN (and restart) instead.\n');
    return 1;
  }
  const running = environment.databaseUrl ? await otherSessions(environment.databaseUrl) : runningOn(environment.dataDir);
  if (running) {
    process.stderr.write(`${running} Stop it first: a running server keeps the admin tokens it loaded at start, so a reset now would not reach it.\n`);
    return 1;
  }
  const platform = await openPlatform(environment, { runDurable: false });
  try {
    const now = new Date();
    const reset = await resetAdminTokens(platform.database, now);
    const metadata = { actor: `cli:${safeUser()}`, recordedBy: 'admin-token reset' };
    try {
      await platform.store.append({
        streamId: ADMIN_TOKEN_STREAM,
        expectedVersion: 'any',
        events: [
          ...reset.revoked.map((tokenId) => ({ type: 'AdminTokenRevoked', data: { tokenId, reason: 'admin-token reset' }, metadata })),
          { type: 'AdminTokenIssued', data: { tokenId: reset.tokenId, origin: 'switchyard admin-token reset' }, metadata },
        ],
      });
    } catch (error) {
      throw new Error(`the admin tokens were replaced but the reset could not be recorded (${(error as Error).message}); run the command again`);
    }
    const revoked = reset.revoked.length ? `Revoked ${reset.revoked.length} admin token(s) (${reset.revoked.join(', ')}); issued` : 'No admin token was stored; issued';
    process.stderr.write(`${revoked} ${reset.tokenId}. This is the only time it is shown; Switchyard keeps only its hash.\n`);
    process.stdout.write(`${reset.token}\n`);
    return 0;
  } finally {
    await platform.close();
  }
}

function runningOn(dataDir: string): string | null {
  if (dataDir === ':memory:') return null;
  const owner = DataDirLock.owner(dataDir);
  return owner === null ? null : `A Switchyard process (pid ${owner}) is running on the data directory ${dataDir}.`;
}

/** Other Switchyard sessions on the store (servers, projectors, CLI commands): each may hold the old tokens. */
async function otherSessions(databaseUrl: string): Promise<string | null> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'switchyard-admin-token-reset' });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'switchyard' AND pid <> pg_backend_pid()`,
    );
    return rows[0].n > 0 ? `${rows[0].n} Switchyard session(s) are connected to this event store (a server, projector or CLI command).` : null;
  } finally {
    await client.end();
  }
}

function safeUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}
