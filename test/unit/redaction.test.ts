import { redactText } from '../../src/kernel/redaction/redact-text.js';
import { rememberSecret, rememberUrlCredentials } from '../../src/kernel/secret-references/known-secrets.js';

/**
 * Provider text passes redactText before anyone reads it (DESIGN §10). Each case is a string an upstream
 * could echo; the secret part must be gone and the part that helps a caller must stay.
 */
describe('redaction of foreign text', () => {
  // Values with no recognisable format: only the registry of held secrets can catch them.
  const providerKey = 'plain-Upstream-credential-4f9Q';
  const adminToken = 'ops-admin-token-value-77Zx';
  const dsnPassword = 'dsn-p@ss/word-31';
  beforeAll(() => {
    rememberSecret(providerKey);
    rememberSecret(adminToken);
    rememberUrlCredentials(`postgres://app:${encodeURIComponent(dsnPassword)}@db.example.net:5432/prod`);
    rememberSecret('AKIDEXAMPLE00000001:bedrockSecretPart/EXAMPLE0000:sessionTokenPartEXAMPLE01');
    // Trust authentication: an account name and no password (not a secret), and a token as the user name (one).
    rememberUrlCredentials('postgres://postgres@127.0.0.1:5432/switchyard');
    rememberUrlCredentials('https://tok3nAsUserName9x7Q2@proxy.example.net/v1');
  });

  test('a DSN account name without a password is not scrubbed from text; a token in the user name is', () => {
    expect(redactText('the postgres backend said: relation missing')).toBe('the postgres backend said: relation missing');
    expect(redactText('bad credential tok3nAsUserName9x7Q2 given')).toBe('bad credential [redacted] given');
  });

  describe('every secret the gateway holds, in every encoding an echo may use', () => {
    const base64At = (prefix: string, value: string) => Buffer.from(`${prefix}${value}`).toString('base64');
    const cases: Array<[string, string, string]> = [
      ['verbatim', `invalid key ${providerKey} for this project`, providerKey],
      ['as a Bearer header', `Authorization: Bearer ${providerKey}`, providerKey],
      ['inside Basic user:password', `Basic ${base64At('user:', providerKey)}`, base64At('user:', providerKey).slice(4, -4)],
      ['base64 at byte offset 0', `blob ${base64At('', providerKey)}`, base64At('', providerKey).slice(0, -4)],
      ['base64 at byte offset 1', `blob ${base64At('x', providerKey)}`, base64At('x', providerKey).slice(4, -4)],
      ['base64 at byte offset 2', `blob ${base64At('xy', providerKey)}`, base64At('xy', providerKey).slice(4, -4)],
      ['base64url', `blob ${Buffer.from(`??${providerKey}??`).toString('base64url')}`, Buffer.from(`??${providerKey}??`).toString('base64url').slice(4, -4)],
      ['URL-encoded', `key=${encodeURIComponent(`${providerKey}/x`)}`, providerKey],
      ['hex', `dump ${Buffer.from(providerKey).toString('hex')}`, Buffer.from(providerKey).toString('hex').slice(0, 40)],
      ['the admin token', `token ${adminToken} rejected`, adminToken],
      ['a DSN password (decoded)', `login failed for password ${dsnPassword}`, dsnPassword],
      ['a DSN password (as it appears in the URL)', `auth ${encodeURIComponent(dsnPassword)}`, encodeURIComponent(dsnPassword)],
      ['a part of a composite credential', 'signature for bedrockSecretPart/EXAMPLE0000 mismatched', 'bedrockSecretPart/EXAMPLE0000'],
    ];
    test.each(cases)('%s', (_name, text, secret) => {
      const redacted = redactText(text);
      expect(redacted).not.toContain(secret);
      expect(redacted).toContain('[redacted]');
    });
  });

  describe('secret formats nobody registered', () => {
    const cases: Array<[string, string]> = [
      ['OpenAI project key', 'sk-proj-AbCdEf0123456789AbCdEf0123456789'],
      ['Anthropic key', 'sk-ant-api03-AbCdEf0123456789-AbCdEf0123456789'],
      ['Switchyard gateway key', 'sk-sy-AbCdEfGhIjKlMnOpQrStUvWxYz012345'],
      ['Switchyard admin token', 'sy-admin-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcd'],
      ['Google API key', 'AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW'],
      ['JWT', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U'],
      ['GitHub token', 'ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789'],
      ['GitHub fine-grained token', 'github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz'],
      ['Slack token', 'xoxb-123456789012-123456789012-AbCdEfGhIjKl'],
      ['AWS access key id', 'AKIAIOSFODNN7EXAMPLE'],
      ['AWS temporary key id', 'ASIAIOSFODNN7EXAMPLE'],
      ['AWS secret access key', 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'],
      ['Hugging Face token', 'hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345'],
      ['a long hex token', '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08'],
      ['a random base64 run', 'Zm9vYmFyQmF6UXV4MTIzNDU2Nzg5MGFiY2RlZmdo'],
    ];
    test.each(cases)('%s', (_name, secret) => {
      const redacted = redactText(`the provider said: ${secret} was used`);
      expect(redacted).not.toContain(secret);
      expect(redacted).toMatch(/^the provider said: \[redacted\] was used$/);
    });

    test('a PEM block, whole or cut off', () => {
      const pem = '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----';
      expect(redactText(`key ${pem} rejected`)).toBe('key [redacted] rejected');
      expect(redactText('key -----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA')).toBe('key [redacted]');
    });

    test('credential headers and key=value pairs keep their name and lose their value', () => {
      expect(redactText('got x-api-key: abc123 and "api-key":"zzz9"')).toBe('got x-api-key: [redacted] and "api-key":"[redacted]"');
      expect(redactText('password=hunter2 client_secret: "s3cr3t" access_key=AK1')).toBe('password=[redacted] client_secret: "[redacted]" access_key=[redacted]');
      expect(redactText('Authorization: Basic dXNlcjpwYXNz')).toBe('Authorization: [redacted]');
    });
  });

  describe('addresses, hosts and DSNs', () => {
    const cases: Array<[string, string, string[]]> = [
      ['a DSN', 'cannot reach postgres://app:hunter2@db.internal:5432/prod.', ['hunter2', 'db.internal', 'postgres://']],
      ['a Redis URL', 'redis://:tok3n@cache.corp:6379/0 refused', ['tok3n', 'cache.corp', '6379']],
      ['an https URL', 'see https://internal.example.com/admin?token=1', ['internal.example.com', 'token=1']],
      ['user:password@host without a scheme', 'login admin:pa55@10.1.2.3 failed', ['pa55', '10.1.2.3']],
      ['IPv4 with a port', 'connect ECONNREFUSED 10.0.0.5:5432', ['10.0.0.5', '5432']],
      ['the metadata address', 'fetched 169.254.169.254 ok', ['169.254.169.254']],
      ['IPv6, bracketed with a port', 'upstream [fd00:ec2::254]:80 down', ['fd00:ec2::254']],
      ['IPv4-mapped IPv6', 'via ::ffff:a9fe:a9fe and ::ffff:10.0.0.1', ['a9fe:a9fe', '10.0.0.1']],
      ['link-local IPv6 with a zone', 'route fe80::1%eth0 unreachable', ['fe80::1', 'eth0']],
      ['loopback', 'proxy at localhost:8080 and ::1 failed', ['localhost', '8080']],
      ['an internal host:port', 'upstream db-primary.prod.internal:6432 timed out', ['db-primary', 'prod.internal', '6432']],
      ['a single-label service with a port', 'dial tcp vllm-backend:8000: connection refused', ['vllm-backend', '8000']],
      ['host names under common suffixes', 'routed via gw.example.org and metadata.google.internal.', ['gw.example.org', 'metadata.google.internal']],
      ['a wildcard-DNS host', 'resolved 169.254.169.254.nip.io', ['169.254', 'nip.io']],
    ];
    test.each(cases)('%s', (_name, text, leaks) => {
      const redacted = redactText(text);
      for (const leak of leaks) expect({ text, redacted, leak, found: redacted.includes(leak) }).toMatchObject({ found: false });
    });
  });

  describe('what helps the caller stays', () => {
    test.each([
      "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens (8000 in the messages, 1000 in the completion).",
      'messages.0.content.1.image_url.url: invalid image; max_tokens: 100000 > 4096, which is the maximum allowed for claude-3-5-sonnet-20241022',
      "Invalid value for 'temperature': 3 is greater than the maximum of 2 - 'temperature'",
      'The provided model identifier anthropic.claude-3-5-sonnet-20240620-v1:0 is invalid.',
      'tools[0].function.parameters: schema too deep at 2024-01-01T12:30:45Z',
    ])('%s', (text) => {
      expect(redactText(text)).toBe(text);
    });
  });

  test('the result is one line and capped, and the cap never cuts a secret in half', () => {
    const secret = 'sk-proj-AbCdEf0123456789AbCdEf0123456789';
    const text = `${'x '.repeat(140)}line\nbreak\t${secret} ${'y'.repeat(1000)}`;
    const redacted = redactText(text);
    expect(redacted.length).toBeLessThanOrEqual(300);
    expect(redacted).not.toMatch(/[\n\t]/);
    expect(redacted).not.toContain('sk-proj-AbCd');
    expect(redactText('word '.repeat(2_000), 50)).toHaveLength(50);
  });

  test('short values are not registered: they would destroy ordinary words', () => {
    rememberSecret('the');
    expect(redactText('the request is invalid')).toBe('the request is invalid');
  });
});
