import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { redactText } from '../../src/kernel/redaction/redact-text.js';
import { SecretResolutionError, resolveSecret } from '../../src/kernel/secret-references/secret-reference.js';
import { SecretPolicyError, secretReferencePolicy } from '../../src/kernel/secret-references/secret-reference-policy.js';

/** What a secret reference may read (DESIGN §10): an allowed env: list and a secrets directory, nothing else. */
describe('secret references', () => {
  let dir: string;
  let secrets: string;
  const message = (ref: string, policy = secretReferencePolicy({}, join(dir, 'data'))): string => {
    try {
      resolveSecret(ref, policy);
    } catch (error) {
      expect(error).toBeInstanceOf(SecretResolutionError);
      return (error as Error).message;
    }
    throw new Error(`${ref} resolved`);
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'switchyard-secret-refs-'));
    secrets = join(dir, 'data', 'secrets');
    mkdirSync(secrets, { recursive: true });
    writeFileSync(join(secrets, 'openai'), 'file-held-provider-key-1234\n');
    writeFileSync(join(secrets, 'empty'), '');
    writeFileSync(join(dir, 'outside'), 'outside-the-directory-5678\n');
    symlinkSync('/etc/hostname', join(secrets, 'escape'));
    symlinkSync(join(dir, 'outside'), join(secrets, 'escape-relative'));
    mkdirSync(join(secrets, 'subdir'));
    execFileSync('mkfifo', [join(secrets, 'fifo')]);
    Object.assign(process.env, {
      OPENAI_API_KEY: 'env-held-openai-key-1234', ACME_APP_KEY: 'env-held-gateway-key-5678', HF_TOKEN: 'env-held-hf-token-9012',
      BEDROCK_CREDENTIALS: 'AKIDEXAMPLE:secretEXAMPLE', ADMIN_TOKEN: 'the-admin-token-of-this-gateway', DATABASE_URL: 'postgres://u:p@db/x',
      REDIS_URL: 'redis://:p@cache:6379', CLICKHOUSE_URL: 'http://u:p@ch:8123/db', SWITCHYARD_TEST_SECRET_KEY: 'gateway-setting-value',
      AWS_SECRET_ACCESS_KEY: 'ambient-cloud-secret', CUSTOM_VALUE: 'not-a-credential-name',
    });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  describe('env: with the default list', () => {
    test.each(['OPENAI_API_KEY', 'ACME_APP_KEY', 'HF_TOKEN', 'BEDROCK_CREDENTIALS'])('env:%s resolves', (name) => {
      expect(resolveSecret(`env:${name}`, secretReferencePolicy({}, null))).toBe(process.env[name]);
    });

    test.each(['ADMIN_TOKEN', 'DATABASE_URL', 'REDIS_URL', 'CLICKHOUSE_URL', 'SWITCHYARD_TEST_SECRET_KEY', 'AWS_SECRET_ACCESS_KEY', 'CUSTOM_VALUE', 'PATH'])(
      'env:%s is refused',
      (name) => {
        expect(message(`env:${name}`)).toBe(message('env:UNSET_BUT_ALLOWED_KEY'));
      },
    );
  });

  test('the gateway\'s own settings stay out of reach whatever SWITCHYARD_SECRET_ENV allows', () => {
    const everything = secretReferencePolicy({ SWITCHYARD_SECRET_ENV: '*' }, null);
    expect(resolveSecret('env:CUSTOM_VALUE', everything)).toBe('not-a-credential-name');
    for (const name of ['ADMIN_TOKEN', 'DATABASE_URL', 'REDIS_URL', 'CLICKHOUSE_URL', 'SWITCHYARD_TEST_SECRET_KEY']) {
      expect(() => resolveSecret(`env:${name}`, everything)).toThrow(SecretResolutionError);
    }
    const exact = secretReferencePolicy({ SWITCHYARD_SECRET_ENV: 'ADMIN_TOKEN,DATABASE_URL' }, null);
    expect(() => resolveSecret('env:ADMIN_TOKEN', exact)).toThrow(SecretResolutionError);
  });

  test('SWITCHYARD_SECRET_ENV: exact names, * patterns and ! exclusions; the last match decides', () => {
    const policy = secretReferencePolicy({ SWITCHYARD_SECRET_ENV: 'OPENAI_*, !OPENAI_API_KEY, CUSTOM_VALUE' }, null);
    expect(resolveSecret('env:CUSTOM_VALUE', policy)).toBe('not-a-credential-name');
    expect(() => resolveSecret('env:OPENAI_API_KEY', policy)).toThrow(SecretResolutionError);
    expect(() => resolveSecret('env:ACME_APP_KEY', policy)).toThrow(SecretResolutionError);
    expect(() => secretReferencePolicy({ SWITCHYARD_SECRET_ENV: 'OPENAI-KEY' }, null)).toThrow(SecretPolicyError);
  });

  describe('file:', () => {
    test('a regular file under the secrets directory resolves, trailing newline trimmed', () => {
      expect(resolveSecret(`file:${join(secrets, 'openai')}`, secretReferencePolicy({}, join(dir, 'data')))).toBe('file-held-provider-key-1234');
    });

    test('anything else gets one message, whether or not the path exists', () => {
      const missing = message(`file:${join(secrets, 'missing')}`);
      for (const path of ['/etc/passwd', '/etc/hostname', join(dir, 'outside'), join(secrets, 'escape'), join(secrets, 'escape-relative'),
        join(secrets, 'subdir'), join(secrets, 'fifo'), join(secrets, 'empty'), `${secrets}/../../outside`, '/nonexistent/switchyard/secret']) {
        expect({ path, message: message(`file:${path}`) }).toEqual({ path, message: missing });
      }
      expect(missing).not.toMatch(/exist(s|ed)? not|no such|ENOENT|EACCES/i);
    });

    test('SWITCHYARD_SECRETS_DIR replaces the defaults; relative or root directories are refused', () => {
      const own = secretReferencePolicy({ SWITCHYARD_SECRETS_DIR: dir }, null);
      expect(resolveSecret(`file:${join(dir, 'outside')}`, own)).toBe('outside-the-directory-5678');
      expect(() => resolveSecret(`file:${join(secrets, 'openai')}`, secretReferencePolicy({ SWITCHYARD_SECRETS_DIR: join(dir, 'elsewhere') }, join(dir, 'data')))).toThrow(
        SecretResolutionError,
      );
      expect(() => secretReferencePolicy({ SWITCHYARD_SECRETS_DIR: 'relative/dir' }, null)).toThrow(SecretPolicyError);
      expect(() => secretReferencePolicy({ SWITCHYARD_SECRETS_DIR: '/' }, null)).toThrow(SecretPolicyError);
    });

    test('the defaults are /run/secrets and secrets/ in the data directory (none for an in-memory store)', () => {
      expect(secretReferencePolicy({}, '/var/lib/switchyard').secretDirectories).toEqual(['/run/secrets', '/var/lib/switchyard/secrets']);
      expect(secretReferencePolicy({}, ':memory:').secretDirectories).toEqual(['/run/secrets']);
    });
  });

  test('every resolved value is remembered, so provider text that echoes it is scrubbed', () => {
    const value = resolveSecret('env:HF_TOKEN', secretReferencePolicy({}, null));
    expect(redactText(`rejected ${value} here`)).toBe('rejected [redacted] here');
  });
});
