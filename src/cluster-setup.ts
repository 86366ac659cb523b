import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AdminTokens, LOST_ADMIN_TOKEN_NOTICE, checkConfiguredAdminToken } from '../modules/admin/admin-tokens.js';
import { CliModule } from './cli/cli.module.js';
import { startupApplyLog } from './config/apply/apply-report.js';
import { ConfigApplier } from './config/apply/config-applier.js';
import type { Environment } from './config/environment.js';
import { logLevels, startupConfiguration } from './gateway.js';
import { GatewayLogger } from './gateway-logger.js';
import { openPlatform } from './platform.js';
import { installPublicationGuard } from './publication-guard.js';

export interface ClusterSetup {
  adminToken: string | null;
  demoKey: string | null;
  close(): Promise<void>;
}

/**
 * What a multi-worker node does once, in its primary process, before any worker serves: migrate, make
 * sure an admin token exists, apply the configuration (workers racing to apply it would conflict on
 * stream versions), and keep running the durable projections unless a separate projector does.
 */
export async function prepareCluster(environment: Environment): Promise<ClusterSetup> {
  Logger.overrideLogger(new GatewayLogger(logLevels(environment.logLevel)));
  // As startGateway: a file with a mistake stops the start before the admin token is generated.
  const configured = environment.configPath ? startupConfiguration(environment) : null;
  checkConfiguredAdminToken(environment.adminToken);
  const platform = await openPlatform(environment, { runDurable: (environment.projector ?? 'embedded') === 'embedded' });
  let tokens: AdminTokens | null = null;
  try {
    installPublicationGuard(platform);
    await platform.runner.start();
    tokens = new AdminTokens(platform.database, environment.adminToken);
    await tokens.initialize();
    const startup = configured ?? startupConfiguration(environment);
    const app = await NestFactory.createApplicationContext(CliModule.forRoot(platform), { logger: logLevels(environment.logLevel) });
    try {
      const result = await app.get(ConfigApplier).apply(startup.config, { dryRun: false, prune: false, actor: `config:${startup.source}` });
      const logger = new Logger('Switchyard');
      const lines = startupApplyLog(startup.source, result);
      for (const line of lines.log) logger.log(line);
      for (const line of lines.warn) logger.warn(line);
    } finally {
      await app.close();
    }
    return { adminToken: tokens.takeGeneratedToken(), demoKey: startup.demoKey, close: () => platform.close() };
  } catch (error) {
    if (tokens?.generatedOne) new Logger('Switchyard').error(LOST_ADMIN_TOKEN_NOTICE);
    await platform.close().catch(() => undefined);
    throw error;
  }
}
