import { Controller, Get, Inject } from '@nestjs/common';
import { PLATFORM } from './platform.module.js';
import type { Platform } from './platform.js';

/** Liveness and readiness for load balancers; no secrets, no per-tenant data. */
@Controller()
export class HealthController {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  @Get('healthz')
  health() {
    return { status: 'ok' };
  }

  @Get('readyz')
  ready() {
    return {
      status: 'ready',
      snapshotVersion: this.platform.routing.current.version,
      aliases: this.platform.routing.current.aliases.size,
    };
  }
}
