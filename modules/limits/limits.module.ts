import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { Environment } from '../../src/config/environment.js';
import { ENVIRONMENT } from '../../src/platform.module.js';
import { AdmissionControl } from './admission-control.js';
import { resolveAdmission } from './admission-settings.js';
import { DeploymentConcurrency } from './deployment-concurrency.js';
import { RateLimiter } from './rate-limit/rate-limiter.js';

/** Admission: concurrency permits per key, tenant, node and deployment; per-minute rate limits. */
@Module({
  providers: [
    {
      provide: RateLimiter,
      useFactory: async (environment: Environment) => {
        const limiter = new RateLimiter(environment.redisUrl, environment.nodeId);
        await limiter.start();
        return limiter;
      },
      inject: [ENVIRONMENT],
    },
    { provide: AdmissionControl, useFactory: (environment: Environment) => new AdmissionControl(resolveAdmission(environment.admission)), inject: [ENVIRONMENT] },
    { provide: DeploymentConcurrency, useFactory: () => new DeploymentConcurrency() },
  ],
  exports: [AdmissionControl, DeploymentConcurrency, RateLimiter],
})
export class LimitsModule implements OnApplicationShutdown {
  constructor(@Inject(RateLimiter) private readonly rateLimits: RateLimiter) {}

  async onApplicationShutdown(): Promise<void> {
    await this.rateLimits.close();
  }
}
