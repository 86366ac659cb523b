import { ProviderError } from '../../canonical/index.js';
import type { Credential } from '../../../projections/routing-snapshot/index.js';

/** AWS credentials for SigV4, parsed from the provider's one secret. */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/**
 * A Bedrock provider's `apiKey` reference resolves to one secret of the form
 * `ACCESS_KEY_ID:SECRET_ACCESS_KEY` or `ACCESS_KEY_ID:SECRET_ACCESS_KEY:SESSION_TOKEN` (temporary STS
 * credentials). AWS access key ids, secret keys and session tokens never contain ':', so the split is
 * unambiguous. Errors never echo any part of the secret.
 */
export function parseAwsCredentials(credential: Credential | null): AwsCredentials {
  if (!credential) throw new ProviderError('auth', 'the bedrock provider has no credentials (apiKey: env:NAME holding ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN])');
  const parts = credential.reveal().trim().split(':');
  if (parts.length < 2 || parts.length > 3 || parts.some((part) => part.length === 0)) {
    throw new ProviderError('auth', 'the bedrock credentials are not of the form ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN]');
  }
  const [accessKeyId, secretAccessKey, sessionToken] = parts;
  return sessionToken ? { accessKeyId, secretAccessKey, sessionToken } : { accessKeyId, secretAccessKey };
}
