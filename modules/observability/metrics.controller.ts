import { Controller, Get, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ClusterMetrics } from './cluster-metrics.js';
import { Observability } from './observability.js';

/**
 * `GET /metrics` in the Prometheus text format. Behind the admin credential unless
 * SWITCHYARD_METRICS_ACCESS=open (checked before the route runs, with the admin API's errors). With
 * SWITCHYARD_WORKERS=N the answer is the sum over all workers (gauges of per-worker state: their
 * maximum), whichever worker the scrape reached.
 */
@Controller('metrics')
export class MetricsController {
  constructor(
    private readonly observability: Observability,
    private readonly cluster: ClusterMetrics,
  ) {}

  @Get()
  async metrics(@Res() reply: FastifyReply): Promise<void> {
    const registry = this.observability.metrics.registry;
    const text = await this.cluster.metrics(registry);
    await reply.header('content-type', registry.contentType).header('cache-control', 'no-store').send(text);
  }
}
