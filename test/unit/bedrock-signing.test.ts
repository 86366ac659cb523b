import { createHash, createHmac } from 'node:crypto';
import { ProviderError } from '../../modules/canonical/provider-error.js';
import { parseAwsCredentials } from '../../modules/providers/bedrock/bedrock-credentials.js';
import { BedrockSigner } from '../../modules/providers/bedrock/bedrock-signer.js';
import { Credential } from '../../projections/routing-snapshot/credential.js';
import type { ResolvedDeployment } from '../../projections/routing-snapshot/routing-snapshot.js';
import { resolvedDeployment } from '../support/provider-fixtures.js';

const ACCESS_KEY = 'AKIDEXAMPLE';
const SECRET = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY';
const AT = new Date('2024-05-30T12:34:56Z');

function bedrockDeployment(secret: string | null, region = 'eu-central-1'): ResolvedDeployment {
  const base = resolvedDeployment('bedrock', { secret, model: 'anthropic.claude-3-haiku-20240307-v1:0' });
  return { ...base, provider: { ...base.provider, region } };
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const hmac = (key: string | Buffer, text: string) => createHmac('sha256', key).update(text).digest();

/**
 * SigV4 recomputed independently from the AWS documentation's algorithm (canonical request → string to
 * sign → HMAC chain), so the test proves what AWS would verify, including the double-encoded path that
 * non-S3 services expect for model ids with ':'.
 */
function expectedSignature(headers: Record<string, string>, path: string, body: string, region: string, secret: string): string {
  const signedHeaders = /SignedHeaders=([^,]+)/.exec(headers.authorization)![1];
  const canonicalUri = path.split('/').map((segment) => encodeURIComponent(segment)).join('/');
  const canonicalHeaders = signedHeaders.split(';').map((name) => `${name}:${headers[name].trim()}\n`).join('');
  const canonicalRequest = ['POST', canonicalUri, '', canonicalHeaders, signedHeaders, sha256(body)].join('\n');
  const date = headers['x-amz-date'].slice(0, 8);
  const scope = `${date}/${region}/bedrock/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', headers['x-amz-date'], scope, sha256(canonicalRequest)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), 'bedrock'), 'aws4_request');
  return createHmac('sha256', key).update(stringToSign).digest('hex');
}

describe('Bedrock SigV4 signing', () => {
  const path = `/model/${encodeURIComponent('anthropic.claude-3-haiku-20240307-v1:0')}/converse`;
  const body = JSON.stringify({ messages: [{ role: 'user', content: [{ text: 'Hello' }] }] });

  test('headers are present and well-formed, and the signature is the one AWS computes', async () => {
    const signer = new BedrockSigner(() => AT);
    const headers = await signer.sign(bedrockDeployment(`${ACCESS_KEY}:${SECRET}`), {
      method: 'POST',
      url: new URL(`https://bedrock-runtime.eu-central-1.amazonaws.com${path}`),
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body,
    });
    expect(headers.host).toBe('bedrock-runtime.eu-central-1.amazonaws.com');
    expect(headers['x-amz-date']).toBe('20240530T123456Z');
    expect(headers['x-amz-content-sha256']).toBe(sha256(body));
    expect(headers['x-amz-security-token']).toBeUndefined();
    expect(headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20240530\/eu-central-1\/bedrock\/aws4_request, SignedHeaders=([a-z0-9-]+;)*[a-z0-9-]+, Signature=[0-9a-f]{64}$/,
    );
    const signed = /SignedHeaders=([^,]+)/.exec(headers.authorization)![1].split(';');
    expect(signed).toEqual(expect.arrayContaining(['content-type', 'host', 'x-amz-content-sha256', 'x-amz-date']));
    expect(headers.authorization.endsWith(`Signature=${expectedSignature(headers, path, body, 'eu-central-1', SECRET)}`)).toBe(true);
    expect(JSON.stringify(headers)).not.toContain(SECRET);
  });

  test('a port in the base URL is part of the signed host; a session token is sent and signed', async () => {
    const signer = new BedrockSigner(() => AT);
    const headers = await signer.sign(bedrockDeployment(`${ACCESS_KEY}:${SECRET}:FwoGZXIvYXdzEBYaDTOKEN`, 'us-east-1'), {
      method: 'POST',
      url: new URL(`http://127.0.0.1:4566${path}`),
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(headers.host).toBe('127.0.0.1:4566');
    expect(headers['x-amz-security-token']).toBe('FwoGZXIvYXdzEBYaDTOKEN');
    expect(/SignedHeaders=([^,]+)/.exec(headers.authorization)![1].split(';')).toContain('x-amz-security-token');
    expect(headers.authorization.endsWith(`Signature=${expectedSignature(headers, path, body, 'us-east-1', SECRET)}`)).toBe(true);
  });

  test('a different body or date gives a different signature (nothing is cached across requests but keys)', async () => {
    const deployment = bedrockDeployment(`${ACCESS_KEY}:${SECRET}`);
    const sign = (signer: BedrockSigner, payload: string) =>
      signer.sign(deployment, { method: 'POST', url: new URL(`https://bedrock-runtime.eu-central-1.amazonaws.com${path}`), headers: {}, body: payload });
    const signer = new BedrockSigner(() => AT);
    const a = await sign(signer, body);
    const b = await sign(signer, `${body} `);
    const c = await sign(new BedrockSigner(() => new Date(AT.getTime() + 1000)), body);
    expect(new Set([a.authorization, b.authorization, c.authorization]).size).toBe(3);
  });

  test('credentials: ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN]; anything else is an auth error that does not echo the secret', () => {
    expect(parseAwsCredentials(new Credential(`${ACCESS_KEY}:${SECRET}`))).toEqual({ accessKeyId: ACCESS_KEY, secretAccessKey: SECRET });
    expect(parseAwsCredentials(new Credential(`${ACCESS_KEY}:${SECRET}:TOKEN\n`))).toEqual({ accessKeyId: ACCESS_KEY, secretAccessKey: SECRET, sessionToken: 'TOKEN' });
    for (const bad of [SECRET, `${ACCESS_KEY}:`, `:${SECRET}`, `${ACCESS_KEY}:${SECRET}:a:b`]) {
      let caught: unknown;
      try {
        parseAwsCredentials(new Credential(bad));
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(ProviderError);
      expect((caught as ProviderError).errorClass).toBe('auth');
      expect((caught as ProviderError).message).not.toContain(SECRET);
    }
    expect(() => parseAwsCredentials(null)).toThrow(ProviderError);
  });
});
