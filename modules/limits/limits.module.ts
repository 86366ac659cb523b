import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { Environment } from '../../src/config/environment.js';
import { CommandExecutor } from '../../src/kernel/commands/command-executor.js';
import type { Database } from '../../src/kernel/database/database.js';
import { DATABASE, ENVIRONMENT } from '../../src/platform.module.js';
import { AdmissionControl } from './admission-control.js';
import { resolveAdmission } from './admission-settings.js';
import { BudgetAlerts } from './budget/budget-alerts.js';
import { BudgetGuard } from './budget/budget-guard.js';
import { SpendSeeds } from './budget/spend-seeds.js';
import { DeploymentConcurrency } from './deployment-concurrency.js';
import { LimitsRedis } from './limits-redis.js';
import { RateLimiter } from './rate-limit/rate-limiter.js';

/** Admission: concurrency permits per key, tenant, node and deployment; per-minute rate limits; budgets. */
@Module({
  providers: [
    {
      provide: LimitsRedis,
      useFactory: async (environment: Environment) => {
        const redis = new LimitsRedis(environment.redisUrl, environment.nodeId);
        await redis.start();
        return redis;
      },
      inject: [ENVIRONMENT],
    },
    { provide: RateLimiter, useFactory: (redis: LimitsRedis) => new RateLimiter(redis), inject: [LimitsRedis] },
    {
      provide: BudgetGuard,
      useFactory: (redis: LimitsRedis, database: Database, executor: CommandExecutor, environment: Environment) => {
        const alerts = new BudgetAlerts(executor, environment.nodeId);
        return new BudgetGuard(redis, new SpendSeeds(database), (crossing) => alerts.crossed(crossing));
      },
      inject: [LimitsRedis, DATABASE, CommandExecutor, ENVIRONMENT],
    },
    { provide: AdmissionControl, useFactory: (environment: Environment) => new AdmissionControl(resolveAdmission(environment.admission)), inject: [ENVIRONMENT] },
    { provide: DeploymentConcurrency, useFactory: () => new DeploymentConcurrency() },
  ],
  exports: [AdmissionControl, DeploymentConcurrency, RateLimiter, BudgetGuard, LimitsRedis],
})
export class LimitsModule implements OnApplicationShutdown {
  constructor(@Inject(LimitsRedis) private readonly redis: LimitsRedis) {}

  async onApplicationShutdown(): Promise<void> {
    await this.redis.close();
  }
}
