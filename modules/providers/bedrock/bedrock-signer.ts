import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import type { Credential, ResolvedDeployment } from '../../../projections/routing-snapshot/index.js';
import { parseAwsCredentials } from './bedrock-credentials.js';

/** The service name Bedrock Runtime signs under. */
const SIGNING_SERVICE = 'bedrock';

export interface UnsignedRequest {
  method: 'POST';
  url: URL;
  headers: Record<string, string>;
  body: string;
}

/**
 * SigV4 signing with the AWS SDK's own signer. One signer per credential and region, kept as long as
 * the snapshot keeps that credential object, so its derived signing keys are cached across requests and
 * no per-request client is built.
 */
export class BedrockSigner {
  private readonly signers = new WeakMap<Credential, Map<string, SignatureV4>>();

  constructor(private readonly now: () => Date = () => new Date()) {}

  /** Returns the headers to send: the caller's plus host, x-amz-date, x-amz-content-sha256, authorization (and the session token). */
  async sign(deployment: ResolvedDeployment, request: UnsignedRequest): Promise<Record<string, string>> {
    const region = regionOf(deployment);
    const signer = this.signerFor(deployment.provider.credential, region);
    const signed = await signer.sign(
      {
        method: request.method,
        protocol: request.url.protocol,
        hostname: request.url.hostname,
        port: request.url.port ? Number(request.url.port) : undefined,
        path: request.url.pathname,
        query: {},
        headers: Object.assign({}, request.headers, { host: request.url.host }),
        body: request.body,
      },
      { signingDate: this.now() },
    );
    return signed.headers as Record<string, string>;
  }

  private signerFor(credential: Credential | null, region: string): SignatureV4 {
    const credentials = parseAwsCredentials(credential); // throws an auth ProviderError when absent or malformed
    let byRegion = this.signers.get(credential!);
    if (!byRegion) {
      byRegion = new Map();
      this.signers.set(credential!, byRegion);
    }
    let signer = byRegion.get(region);
    if (!signer) {
      signer = new SignatureV4({ service: SIGNING_SERVICE, region, credentials, sha256: Hash.bind(null, 'sha256'), uriEscapePath: true });
      byRegion.set(region, signer);
    }
    return signer;
  }
}

/**
 * The provider's region (required for bedrock): it names the endpoint the pool reaches, and the signature
 * must name the same region. A deployment's own `region` is a routing label and is not used here.
 */
export function regionOf(deployment: ResolvedDeployment): string {
  return deployment.provider.region ?? 'us-east-1';
}
