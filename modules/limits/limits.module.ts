import { Module } from '@nestjs/common';
import { AdmissionControl } from './admission-control.js';
import { ADMISSION_SETTINGS, type AdmissionSettings } from './admission-settings.js';
import { DeploymentConcurrency } from './deployment-concurrency.js';

/** Admission: concurrency permits per key, tenant, node and deployment. */
@Module({
  providers: [
    { provide: AdmissionControl, useFactory: (settings: AdmissionSettings) => new AdmissionControl(settings), inject: [ADMISSION_SETTINGS] },
    { provide: DeploymentConcurrency, useFactory: () => new DeploymentConcurrency() },
  ],
  exports: [AdmissionControl, DeploymentConcurrency],
})
export class LimitsModule {}
