import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { CommandExecutor, DATABASE, type Database } from '../../src/kernel/index.js';
import { AdmissionControl } from './admission-control.js';
import { ADMISSION_SETTINGS, type AdmissionSettings } from './admission-settings.js';
import { BudgetAlerts } from './budget/budget-alerts.js';
import { BudgetGuard } from './budget/budget-guard.js';
import { SpendSeeds } from './budget/spend-seeds.js';
import { LIMITS_SETTINGS, type LimitsSettings } from './limits-settings.js';
import { DeploymentConcurrency } from './deployment-concurrency.js';
import { LimitsRedis } from './limits-redis.js';
import { RateLimiter } from './rate-limit/rate-limiter.js';
import { SharedConcurrency } from './shared-concurrency.js';

/** Admission: concurrency permits per key, tenant, node and deployment; per-minute rate limits; budgets. */
@Module({
  providers: [
    {
      provide: LimitsRedis,
      useFactory: async (settings: LimitsSettings) => {
        const redis = new LimitsRedis(settings.redisUrl, settings.nodeId, Date.now, settings.namespace);
        await redis.start();
        return redis;
      },
      inject: [LIMITS_SETTINGS],
    },
    { provide: RateLimiter, useFactory: (redis: LimitsRedis) => new RateLimiter(redis), inject: [LimitsRedis] },
    { provide: SharedConcurrency, useFactory: (redis: LimitsRedis) => new SharedConcurrency(redis), inject: [LimitsRedis] },
    {
      provide: BudgetGuard,
      useFactory: (redis: LimitsRedis, database: Database, executor: CommandExecutor, settings: LimitsSettings) => {
        const alerts = new BudgetAlerts(executor, settings.nodeId);
        return new BudgetGuard(redis, new SpendSeeds(database), (crossing) => alerts.crossed(crossing));
      },
      inject: [LimitsRedis, DATABASE, CommandExecutor, LIMITS_SETTINGS],
    },
    { provide: AdmissionControl, useFactory: (settings: AdmissionSettings) => new AdmissionControl(settings), inject: [ADMISSION_SETTINGS] },
    { provide: DeploymentConcurrency, useFactory: (shared: SharedConcurrency) => new DeploymentConcurrency(shared), inject: [SharedConcurrency] },
  ],
  exports: [AdmissionControl, DeploymentConcurrency, RateLimiter, BudgetGuard, LimitsRedis, SharedConcurrency],
})
export class LimitsModule implements OnApplicationShutdown {
  constructor(@Inject(LimitsRedis) private readonly redis: LimitsRedis) {}

  async onApplicationShutdown(): Promise<void> {
    await this.redis.close();
  }
}
