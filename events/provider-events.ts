import type { DomainEvent } from './event.js';

export const PROVIDER_TYPES = ['openai', 'openai-compatible', 'azure-openai', 'anthropic', 'gemini', 'bedrock', 'mock'] as const;
export type ProviderType = (typeof PROVIDER_TYPES)[number];

/** How to reach a provider. Credentials are references (`env:NAME`, `file:PATH`), never the secret. */
export interface ProviderSettings {
  type: ProviderType;
  baseUrl: string | null;
  credentialRef: string | null;
  apiVersion: string | null;
  /** AWS region for Bedrock; informational elsewhere. */
  region: string | null;
  /** Base URLs that resolve to private or link-local addresses are refused unless this is set. */
  allowPrivateNetwork: boolean;
}

export type ProviderRegistered = DomainEvent<'ProviderRegistered', { providerId: string } & ProviderSettings>;
export type ProviderUpdated = DomainEvent<'ProviderUpdated', { providerId: string } & ProviderSettings>;
export type ProviderRemoved = DomainEvent<'ProviderRemoved', { providerId: string; reason: string | null }>;

export type ProviderEvent = ProviderRegistered | ProviderUpdated | ProviderRemoved;
export const PROVIDER_EVENT_TYPES = ['ProviderRegistered', 'ProviderUpdated', 'ProviderRemoved'] as const;

export const providerStream = (providerId: string) => `provider-${providerId}`;
