import { Body, Controller, HttpCode, Post, UseFilters, UseGuards, UsePipes } from '@nestjs/common';
import { IsBoolean, IsOptional, IsString, MaxLength } from 'class-validator';
import { AdminApiError, AdminExceptionFilter, AdminGuard, AdminTokenOnly, adminValidationPipe } from '../../../modules/admin/index.js';
import { ConfigValidationError, parseGatewayConfig } from '../gateway-config.js';
import { ApplyRefusedError, ConfigApplier } from './config-applier.js';

export class ApplyConfigurationDto {
  /** The configuration file's text. */
  @IsString() @MaxLength(2 * 1024 * 1024)
  yaml!: string;

  /** Where it came from (the file's path): recorded as the actor `config:<source>`, as a local apply does. */
  @IsOptional() @IsString() @MaxLength(1000)
  source?: string;

  @IsOptional() @IsBoolean()
  dryRun?: boolean;

  @IsOptional() @IsBoolean()
  prune?: boolean;
}

/**
 * `POST /admin/v1/config/apply`: `switchyard apply` run by the server, for a CLI that cannot open the
 * embedded store itself while the server holds it. Same plan, same refusals, same events; secret
 * references resolve in the server's environment (as they do when it applies SWITCHYARD_CONFIG at start).
 * The admin token only: a configuration sets provider credentials and base URLs.
 */
@Controller('admin/v1/config')
@UseGuards(AdminGuard)
@UseFilters(AdminExceptionFilter)
@UsePipes(adminValidationPipe())
export class ConfigApplyController {
  constructor(private readonly applier: ConfigApplier) {}

  @Post('apply')
  @HttpCode(200)
  @AdminTokenOnly()
  async apply(@Body() body: ApplyConfigurationDto) {
    const source = body.source ?? 'admin-api';
    try {
      const config = parseGatewayConfig(body.yaml, source);
      const result = await this.applier.apply(config, { dryRun: body.dryRun ?? false, prune: body.prune ?? false, actor: `config:${source}` });
      return { steps: result.steps.map((step) => ({ summary: step.summary, path: step.path })), appended: result.appended, drift: result.drift };
    } catch (error) {
      if (error instanceof ConfigValidationError || error instanceof ApplyRefusedError) {
        throw new AdminApiError(422, error instanceof ConfigValidationError ? 'invalid_configuration' : 'apply_refused', error.message,
          error.problems.map((message) => ({ path: '', message })));
      }
      throw error;
    }
  }
}
