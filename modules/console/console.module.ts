import { Global, Inject, Logger, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import cluster from 'node:cluster';
import { Redis } from 'ioredis';
import { AdminModule, AdminSessions } from '../admin/index.js';
import { type EventStore, SqlEventStore } from '../../src/kernel/index.js';
import { ConsoleJournal } from './console-journal.js';
import { ConsoleSessionController } from './console-session.controller.js';
import { CONSOLE_SETTINGS, type ConsoleSettings } from './console-settings.js';
import { ConsoleSessions } from './console-sessions.js';
import type { ConsoleStateStore } from './console-state-store.js';
import { CONSOLE_REDIS, CONSOLE_STATE_STORE } from './console-tokens.js';
import { MemoryConsoleStateStore } from './memory-console-state-store.js';
import { ConsoleOidcController } from './oidc/console-oidc.controller.js';
import { OidcRelyingParty } from './oidc/oidc-relying-party.js';
import { RedisConsoleStateStore } from './redis-console-state-store.js';
import { SignInThrottle } from './sign-in-throttle.js';

/**
 * The console's server side: sessions (in Redis with REDIS_URL, shared by every node; else in memory),
 * sign-in with the admin token or OIDC, and the AdminSessions port the admin guard asks about session
 * cookies. Global, because the guard runs in every context with admin routes.
 */
@Global()
@Module({
  imports: [AdminModule],
  controllers: [ConsoleSessionController, ConsoleOidcController],
  providers: [
    {
      provide: CONSOLE_REDIS,
      useFactory: (settings: ConsoleSettings): Redis | null => {
        if (!settings.redisUrl) return null;
        const redis = new Redis(settings.redisUrl, {
          enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 1_000, connectionName: `switchyard-console-${settings.nodeId}`,
        });
        redis.on('error', () => undefined); // failures surface per command (a 500 to the console); reconnection is automatic
        return redis;
      },
      inject: [CONSOLE_SETTINGS],
    },
    {
      provide: CONSOLE_STATE_STORE,
      useFactory: (settings: ConsoleSettings, redis: Redis | null): ConsoleStateStore =>
        redis ? new RedisConsoleStateStore(redis, settings.namespace) : new MemoryConsoleStateStore(),
      inject: [CONSOLE_SETTINGS, CONSOLE_REDIS],
    },
    {
      provide: ConsoleSessions,
      useFactory: (settings: ConsoleSettings, store: ConsoleStateStore) => new ConsoleSessions(store, settings),
      inject: [CONSOLE_SETTINGS, CONSOLE_STATE_STORE],
    },
    { provide: AdminSessions, useExisting: ConsoleSessions },
    {
      provide: SignInThrottle,
      useFactory: (settings: ConsoleSettings, store: ConsoleStateStore) => new SignInThrottle(store, settings.signInAttemptsPerMinute),
      inject: [CONSOLE_SETTINGS, CONSOLE_STATE_STORE],
    },
    { provide: ConsoleJournal, useFactory: (store: EventStore) => new ConsoleJournal(store), inject: [SqlEventStore] },
    {
      provide: OidcRelyingParty,
      useFactory: (settings: ConsoleSettings): OidcRelyingParty | null => (settings.oidc ? new OidcRelyingParty(settings.oidc, settings.oidcClientSecret) : null),
      inject: [CONSOLE_SETTINGS],
    },
  ],
  exports: [AdminSessions, ConsoleSessions],
})
export class ConsoleModule implements OnModuleInit, OnApplicationShutdown {
  constructor(@Inject(CONSOLE_REDIS) private readonly redis: Redis | null) {}

  onModuleInit(): void {
    if (cluster.isWorker && !this.redis) {
      // Each worker would know only the sessions it opened itself: the console's requests land on any worker.
      new Logger('Console').warn('console sessions are kept in each worker\'s memory: with SWITCHYARD_WORKERS above 1, set REDIS_URL so that every worker knows every session');
    }
  }

  async onApplicationShutdown(): Promise<void> {
    if (!this.redis) return;
    await this.redis.quit().catch(() => this.redis?.disconnect());
  }
}
