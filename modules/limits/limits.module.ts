import { Module } from '@nestjs/common';
import type { Environment } from '../../src/config/environment.js';
import { ENVIRONMENT } from '../../src/platform.module.js';
import { AdmissionControl } from './admission-control.js';
import { resolveAdmission } from './admission-settings.js';
import { DeploymentConcurrency } from './deployment-concurrency.js';

/** Admission: concurrency permits per key, tenant, node and deployment. */
@Module({
  providers: [
    { provide: AdmissionControl, useFactory: (environment: Environment) => new AdmissionControl(resolveAdmission(environment.admission)), inject: [ENVIRONMENT] },
    { provide: DeploymentConcurrency, useFactory: () => new DeploymentConcurrency() },
  ],
  exports: [AdmissionControl, DeploymentConcurrency],
})
export class LimitsModule {}
