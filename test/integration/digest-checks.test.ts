import { randomUUID } from 'node:crypto';
import { type StoreFixture, storeTargets } from '../support/event-store-targets.js';

/**
 * The schema's digest columns accept exactly lower-case hex SHA-256 digests (64 characters), on both
 * stores, after the migration that made the check cheap (HexDigestChecks1764720000400).
 */
describe.each(storeTargets().map((target) => [target.name, target] as const))('digest checks on %s', (_name, target) => {
  let fx: StoreFixture;
  beforeAll(async () => {
    fx = await target.open();
  }, 60_000);
  afterAll(async () => fx?.close());

  const good = 'a'.repeat(32) + '0123456789abcdef'.repeat(2);
  let position = 0;
  const insertChainRow = (prevHash: string, hash: string) => {
    position += 1;
    return fx.database.query(
      `INSERT INTO audit_chain (global_position, sequence, transaction_id, event_id, prev_hash, hash) VALUES ($1, $1, '1', $2, $3, $4)`,
      [position, randomUUID(), prevHash, hash],
    );
  };

  test('a lower-case 64-character hex digest is stored', async () => {
    await insertChainRow(good, good);
    await fx.database.query(`INSERT INTO admin_tokens (token_id, hash, origin) VALUES ($1, $2, 'test')`, [`t-${position}`, good]);
  });

  test.each([
    ['upper case', good.toUpperCase()],
    ['63 characters', good.slice(1)],
    ['65 characters', `${good}0`],
    ['a trailing newline in place of the last digit', `${good.slice(1)}\n`],
    ['a non-hex letter', `${good.slice(1)}g`],
    ['empty', ''],
  ])('%s is refused in every digest column', async (_what, bad) => {
    await expect(insertChainRow(bad, good)).rejects.toThrow(/audit_chain_prev_hash_check/);
    await expect(insertChainRow(good, bad)).rejects.toThrow(/audit_chain_hash_check/);
    await expect(fx.database.query(
      `INSERT INTO audit_checkpoints (sequence, global_position, hash, algorithm, key_id, signature) VALUES (1, 1, $1, 'hmac-sha256', 'k', 's')`,
      [bad],
    )).rejects.toThrow(/audit_checkpoints_hash_check/);
    await expect(fx.database.query(`INSERT INTO admin_tokens (token_id, hash, origin) VALUES ($1, $2, 'test')`, [`bad-${position}`, bad])).rejects.toThrow(/admin_tokens_hash_check/);
  });
});
