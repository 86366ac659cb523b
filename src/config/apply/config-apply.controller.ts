import { Body, Controller, Get, HttpCode, Post, UseFilters, UseGuards, UsePipes } from '@nestjs/common';
import { IsBoolean, IsOptional, IsString, MaxLength } from 'class-validator';
import { AdminArea, AdminApiError, AdminExceptionFilter, AdminGuard, AdminTokenOnly, adminValidationPipe } from '../../../modules/admin/index.js';
import { exportConfiguration } from '../export/configuration-export.js';
import { ConfigValidationError, parseGatewayConfig } from '../gateway-config.js';
import { applyReport } from './apply-report.js';
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

  /** Apply the file's values over runtime edits of settings too (`switchyard apply --overwrite-runtime-edits`). */
  @IsOptional() @IsBoolean()
  overwriteRuntimeEdits?: boolean;
}

/**
 * `POST /admin/v1/config/apply`: `switchyard apply` run by the server, for a CLI that cannot open the
 * embedded store itself while the server holds it. Same plan, same refusals, same events; secret
 * references resolve in the server's environment (as they do when it applies SWITCHYARD_CONFIG at start).
 * Applying takes the admin token: a configuration sets provider credentials and base URLs.
 */
@AdminArea('config')
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
      const result = await this.applier.apply(config, {
        dryRun: body.dryRun ?? false, prune: body.prune ?? false, overwriteRuntimeEdits: body.overwriteRuntimeEdits ?? false, actor: `config:${source}`,
      });
      return applyReport(result);
    } catch (error) {
      if (error instanceof ConfigValidationError) throw new AdminApiError(422, 'invalid_configuration', error.message, [...error.fields]);
      if (error instanceof ApplyRefusedError) {
        throw new AdminApiError(422, 'apply_refused', error.message, error.problems.map((message) => ({ path: '', message })));
      }
      throw error;
    }
  }

  /**
   * `switchyard config export` through the server: the running definitions as a configuration file. Platform
   * administration, as reading providers is: it holds references and hashes, never a secret.
   */
  @Get('export')
  async export() {
    return { yaml: exportConfiguration(await this.applier.currentState(), new Date()) };
  }
}
