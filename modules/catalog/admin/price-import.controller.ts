import { Body, Controller, HttpCode, Post, Req, Res, UseFilters, UseGuards, UsePipes } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RoutingSnapshotProjection } from '../../../projections/routing-snapshot/index.js';
import { AdminArea, AdminApiError, AdminCommands, AdminExceptionFilter, AdminGuard, adminValidationPipe } from '../../admin/index.js';
import { PriceCommand } from '../catalog.commands.js';
import { PriceMapError } from '../price/litellm-price-map.js';
import { importPrices } from '../price/price-import.js';
import { PriceImportDto } from './price-import.dto.js';

/**
 * `POST /admin/v1/prices/import`: schedules a price version for every deployment a LiteLLM price map
 * prices differently from now (see docs/providers.md, "Importing a LiteLLM price map"), each through the
 * Price aggregate with the caller as actor, or only plans it (`dryRun`). A malformed map is 422 naming the
 * entry and field, and appends nothing.
 */
@AdminArea('catalog')
@Controller('admin/v1/prices')
@UseGuards(AdminGuard)
@UseFilters(AdminExceptionFilter)
@UsePipes(adminValidationPipe())
export class PriceImportController {
  constructor(
    private readonly commands: AdminCommands,
    private readonly routing: RoutingSnapshotProjection,
  ) {}

  @Post('import')
  @HttpCode(200)
  async import(@Body() body: PriceImportDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    await this.commands.fresh();
    const now = new Date();
    try {
      return await importPrices(
        body.map,
        this.routing.state,
        { dryRun: body.dryRun ?? false, effectiveFrom: body.effectiveFrom ? new Date(body.effectiveFrom) : now, verbose: body.verbose ?? false, now },
        (command) => this.commands.send(PriceCommand, command, request, reply),
      );
    } catch (error) {
      if (error instanceof PriceMapError) {
        const path = `map${error.entry === null ? '' : `[${JSON.stringify(error.entry)}]`}${error.field === null ? '' : `.${error.field}`}`;
        throw new AdminApiError(422, 'invalid_price_map', `${error.message} Nothing was imported.`, [{ path, message: error.message }]);
      }
      throw error;
    }
  }
}
