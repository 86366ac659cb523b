import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { PLATFORM } from './platform.module.js';
import type { Platform } from './platform.js';

/** How long readiness waits for the database to answer before it calls the event store unreachable. */
const PROBE_TIMEOUT_MS = 1_000;

/** Liveness and readiness for load balancers; no secrets, no addresses, no per-tenant data. */
@Controller()
export class HealthController {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  @Get('healthz')
  health() {
    return { status: 'ok' };
  }

  /**
   * 200 while this node can commit requests; 503 while the event store does not answer (every answer
   * must be committed before it is delivered, so the node cannot serve). Each failing part is named —
   * queries, LISTEN notifications, a projection — and the probe runs on every call, so readiness
   * recovers by itself when the database does.
   */
  @Get('readyz')
  async ready(@Res({ passthrough: true }) reply: FastifyReply) {
    const { database, routing, runner } = this.platform;
    const eventStore = await database.checkHealth(PROBE_TIMEOUT_MS);
    const failingProjections = runner.status().filter((projection) => projection.lastError !== null).map((projection) => projection.name);
    const problems = [...eventStore.problems, ...failingProjections.map((name) => `projection ${name}: failing, retrying`)];
    if (!eventStore.reachable) reply.status(503);
    return {
      status: eventStore.reachable ? 'ready' : 'unavailable',
      eventStore: { reachable: eventStore.reachable, kind: database.kind },
      problems,
      snapshotVersion: routing.current.version,
      aliases: routing.current.aliases.size,
    };
  }
}
