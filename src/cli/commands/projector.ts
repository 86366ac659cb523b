import { Logger } from '@nestjs/common';
import { readEnvironment } from '../../config/environment.js';
import { logLevels } from '../../gateway.js';
import { GatewayLogger } from '../../gateway-logger.js';
import { openPlatform } from '../../platform.js';

/**
 * `switchyard projector`: the durable projections (ledger, spend) in a process of their own, next to
 * serving nodes started with SWITCHYARD_PROJECTOR=external — so projection writes never cost the serving
 * path. Singletons hold an advisory-lock lease, so running several projectors is safe (one works, the
 * others stand by and take over if it dies). Needs PostgreSQL: the embedded store belongs to one process.
 */
export async function projector(): Promise<void> {
  const environment = readEnvironment();
  if (!environment.databaseUrl) throw new Error('switchyard projector needs DATABASE_URL (with embedded PGlite, serve runs the projections itself)');
  // The serving process's logger: levels from LOG_LEVEL, colour only at a terminal.
  Logger.overrideLogger(new GatewayLogger(logLevels(environment.logLevel)));
  const logger = new Logger('Projector');
  const platform = await openPlatform(environment, { runDurable: true });
  await platform.runner.start();
  logger.log(`running the durable projections: ${platform.runner.status().filter((s) => s.kind === 'durable').map((s) => s.name).join(', ')}`);
  let closing = false;
  const stop = (signal: string) => {
    if (closing) return;
    closing = true;
    logger.log(`${signal}: storing checkpoints and closing`);
    platform.close().then(() => process.exit(0), (error: Error) => {
      logger.error(`shutdown failed: ${error.message}`);
      process.exit(1);
    });
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}
