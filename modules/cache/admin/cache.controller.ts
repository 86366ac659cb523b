import { Controller, Delete, Inject, Logger, Query, Req, UseFilters, UseGuards } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { AdminArea, AdminApiError, AdminExceptionFilter, AdminGuard, principalOf, TenantScoped } from '../../admin/index.js';
import { EXACT_CACHE } from '../cache.module.js';
import type { ExactCache } from '../exact-cache.js';
import { purgeCutoff } from './cache-purge.js';

const ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * `DELETE /admin/v1/cache?tenant=&alias=&olderThan=`: removes exact-cache entries; the filters combine
 * (none = every entry). The cache is not part of the event log (it holds content), so a purge appends
 * no event; it is logged with what it removed. A tenant admin purges its own tenant's entries only: its
 * purge is always filtered to its tenant (`tenant=` naming another is 404).
 */
@AdminArea('cache')
@Controller('admin/v1/cache')
@UseGuards(AdminGuard)
@UseFilters(AdminExceptionFilter)
export class CacheController {
  private readonly logger = new Logger('CacheAdmin');

  constructor(@Inject(EXACT_CACHE) private readonly cache: ExactCache) {}

  @Delete()
  @TenantScoped()
  async purge(
    @Req() request: FastifyRequest, @Query('tenant') tenant?: string, @Query('alias') alias?: string, @Query('olderThan') olderThan?: string,
  ) {
    const fields = [];
    if (tenant !== undefined && !(typeof tenant === 'string' && ID.test(tenant))) fields.push({ path: 'tenant', message: 'tenant must be one tenant id' });
    if (alias !== undefined && !(typeof alias === 'string' && ID.test(alias))) fields.push({ path: 'alias', message: 'alias must be one alias name' });
    const cutoff = olderThan === undefined ? null : typeof olderThan === 'string' ? purgeCutoff(olderThan, Date.now()) : null;
    if (olderThan !== undefined && cutoff === null) {
      fields.push({ path: 'olderThan', message: 'olderThan must be a duration such as 90s, 15m, 2h or 7d (plain digits are seconds), or an ISO-8601 instant' });
    }
    if (fields.length > 0) throw new AdminApiError(400, 'invalid_request', 'The purge filters are invalid.', fields);
    const filter = { tenantId: principalOf(request).confine(tenant), alias: alias ?? null, storedBefore: cutoff };
    let purged: number;
    try {
      purged = await this.cache.purge(filter);
    } catch (error) {
      throw new AdminApiError(503, 'cache_unavailable', `The cache store could not be reached: ${(error as Error).message}. Nothing was purged for certain; retry.`);
    }
    this.logger.log(`cache purge (tenant=${filter.tenantId ?? '*'}, alias=${filter.alias ?? '*'}, olderThan=${olderThan ?? '-'}) removed ${purged} entries`);
    return { purged, filter: { tenant: filter.tenantId, alias: filter.alias, storedBefore: cutoff === null ? null : new Date(cutoff).toISOString() } };
  }
}
