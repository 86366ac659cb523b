import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
import { CONTENT_SAFETY_SETTINGS, type ContentSafetySettings } from './content-safety-settings.js';
import type { GuardResources } from './content-guard.js';
import { PlaceholderKeys } from './placeholder-keys.js';
import { SessionTokenVault } from './session-token-vault.js';

/** What every request's content guard is built from (GuardResources). */
export const CONTENT_GUARD_RESOURCES = Symbol('CONTENT_GUARD_RESOURCES');
const VAULT_REDIS = Symbol('VAULT_REDIS');

/**
 * Content safety's process-wide parts: the placeholder keys (the operator's SWITCHYARD_PII_KEY, else a random
 * per-process key) and, when both the key and REDIS_URL are set, the Redis connection session vaults use. A
 * request's guard is built per request from these (modules/inference).
 */
@Module({
  providers: [
    {
      provide: VAULT_REDIS,
      useFactory: (settings: ContentSafetySettings): Redis | null => {
        if (!settings.redisUrl || !settings.piiKey) return null;
        const redis = new Redis(settings.redisUrl, { maxRetriesPerRequest: 1, commandTimeout: 1_000, connectionName: `switchyard-pii-${settings.nodeId}` });
        redis.on('error', () => undefined); // a failed command fails its request; reconnection is automatic
        return redis;
      },
      inject: [CONTENT_SAFETY_SETTINGS],
    },
    {
      provide: CONTENT_GUARD_RESOURCES,
      useFactory: (settings: ContentSafetySettings, redis: Redis | null): GuardResources => {
        const keys = PlaceholderKeys.from({ piiKey: () => settings.piiKey });
        return {
          keys,
          sessionVault: redis ? (tenantId, sessionId) => new SessionTokenVault(redis, keys, tenantId, sessionId, settings.sessionTtlSeconds) : null,
        };
      },
      inject: [CONTENT_SAFETY_SETTINGS, VAULT_REDIS],
    },
  ],
  exports: [CONTENT_GUARD_RESOURCES],
})
export class ContentSafetyModule implements OnApplicationShutdown {
  constructor(@Inject(VAULT_REDIS) private readonly redis: Redis | null) {}

  async onApplicationShutdown(): Promise<void> {
    if (!this.redis) return;
    await this.redis.quit().catch(() => this.redis?.disconnect());
  }
}
