import { Logger } from '@nestjs/common';
import { Pool } from 'undici';
import type { ResolvedDeployment, RoutingSnapshot } from '../../projections/routing-snapshot/index.js';
import type { MockProviderHost } from './mock/mock-provider-host.js';
import { type HostResolver, guardedConnector } from './outbound-connector.js';

const DEFAULT_BASE_URLS: Partial<Record<string, string>> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com',
  gemini: 'https://generativelanguage.googleapis.com',
};

export interface UpstreamTarget {
  dispatcher: Pool;
  baseUrl: URL;
}

interface Entry extends UpstreamTarget {
  fingerprint: string;
}

export interface UpstreamPoolOptions {
  connectTimeoutMs: number;
  connections: number;
  /** How host names resolve (the system resolver unless a test injects one). */
  resolve?: HostResolver;
}

/**
 * One undici connection pool per deployment, created on first use and kept across snapshots while the
 * deployment's fingerprint is unchanged; never built per request. Every connection a pool opens passes
 * the outbound address policy on the address it connects to, except those to the in-process mock
 * provider (the gateway's own loopback server).
 */
export class UpstreamPools {
  private static readonly logger = new Logger('UpstreamPools');
  private readonly pools = new Map<string, Entry>();

  constructor(
    private readonly mockHost: MockProviderHost,
    private readonly options: UpstreamPoolOptions,
  ) {}

  async target(deployment: ResolvedDeployment): Promise<UpstreamTarget> {
    const existing = this.pools.get(deployment.id);
    if (existing && existing.fingerprint === deployment.fingerprint) return existing;
    const baseUrl = new URL(await this.baseUrlOf(deployment));
    const provider = deployment.provider;
    const internal = provider.type === 'mock' && !provider.baseUrl;
    const entry: Entry = {
      fingerprint: deployment.fingerprint,
      baseUrl,
      dispatcher: new Pool(baseUrl.origin, {
        connections: this.options.connections,
        pipelining: 1,
        keepAliveTimeout: 30_000,
        connect: internal
          ? { timeout: this.options.connectTimeoutMs }
          : guardedConnector({
              timeoutMs: this.options.connectTimeoutMs,
              allowPrivateNetwork: provider.allowPrivateNetwork,
              resolve: this.options.resolve,
              onRefused: (host, address, reason) =>
                UpstreamPools.logger.warn(`provider ${provider.id}: connection to ${host} (${address}) refused: ${reason}`),
            }),
      }),
    };
    const raced = this.pools.get(deployment.id);
    if (raced && raced.fingerprint === deployment.fingerprint) {
      void entry.dispatcher.close();
      return raced;
    }
    this.pools.set(deployment.id, entry);
    if (existing) void existing.dispatcher.close(); // in-flight requests on the old pool finish first
    return entry;
  }

  /** Drops pools of deployments that left the snapshot or changed how they are reached. */
  retain(snapshot: RoutingSnapshot): void {
    for (const [id, entry] of this.pools) {
      const deployment = snapshot.deployments.get(id);
      if (!deployment || deployment.fingerprint !== entry.fingerprint) {
        this.pools.delete(id);
        void entry.dispatcher.close();
      }
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((entry) => entry.dispatcher.destroy()));
    this.pools.clear();
  }

  private async baseUrlOf(deployment: ResolvedDeployment): Promise<string> {
    const provider = deployment.provider;
    if (provider.type === 'mock' && !provider.baseUrl) return this.mockHost.url();
    const url = provider.baseUrl ?? (provider.type === 'bedrock' && provider.region ? bedrockRuntimeUrl(provider.region) : DEFAULT_BASE_URLS[provider.type]);
    if (!url) throw new Error(`provider ${provider.id} has no base URL`);
    return url;
  }
}

/** Bedrock Runtime's regional endpoint; the region comes from the provider (required for bedrock). */
function bedrockRuntimeUrl(region: string): string {
  if (!/^[a-z]{2}(-[a-z]+)+-\d+$/.test(region)) throw new Error(`bedrock region '${region}' is not an AWS region name`);
  return `https://bedrock-runtime.${region}.amazonaws.com`;
}
