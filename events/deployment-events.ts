import type { DomainEvent } from './event.js';

export const CAPABILITIES = ['chat', 'streaming', 'tools', 'vision', 'json_schema', 'json_object', 'embeddings', 'n', 'reasoning', 'audio', 'strict_tools', 'structured_outputs', 'documents', 'moderation'] as const;
export type Capability = (typeof CAPABILITIES)[number];

/**
 * The provider's quota for this deployment, counted per quota group (`quotaGroup`, else the deployment
 * alone) and shared by every alias and tenant that routes there: rpm / tpm (and the optional input /
 * output token rates, left out when unset) per minute, and maxConcurrency as calls in flight to the group
 * (each call checked against its own deployment's limit) — across every node when Redis is configured,
 * per node otherwise or while Redis is away.
 */
export interface DeploymentLimits {
  rpm: number | null;
  tpm: number | null;
  inputTpm?: number | null;
  outputTpm?: number | null;
  maxConcurrency: number | null;
}

/** A model at a provider, as the gateway may call it. */
export interface DeploymentSettings {
  providerId: string;
  /** The provider's model id (for Azure: the deployment name). */
  model: string;
  region: string | null;
  capabilities: Capability[];
  contextWindow: number;
  maxOutputTokens: number;
  quotaGroup: string | null;
  limits: DeploymentLimits;
}

export type DeploymentRegistered = DomainEvent<'DeploymentRegistered', { deploymentId: string } & DeploymentSettings>;
export type DeploymentUpdated = DomainEvent<'DeploymentUpdated', { deploymentId: string } & DeploymentSettings>;
export type DeploymentDisabled = DomainEvent<'DeploymentDisabled', { deploymentId: string; reason: string | null }>;
export type DeploymentEnabled = DomainEvent<'DeploymentEnabled', { deploymentId: string }>;
export type DeploymentRetired = DomainEvent<'DeploymentRetired', { deploymentId: string; reason: string | null }>;

export type DeploymentEvent = DeploymentRegistered | DeploymentUpdated | DeploymentDisabled | DeploymentEnabled | DeploymentRetired;
export const DEPLOYMENT_EVENT_TYPES = [
  'DeploymentRegistered', 'DeploymentUpdated', 'DeploymentDisabled', 'DeploymentEnabled', 'DeploymentRetired',
] as const;

export const deploymentStream = (deploymentId: string) => `deployment-${deploymentId}`;
