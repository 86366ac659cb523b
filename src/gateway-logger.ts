import { ConsoleLogger, type LogLevel } from '@nestjs/common';
import { colouredFor } from './log-colours.js';

/** The framework's start-up chatter (module wiring, one line per mapped route): shown at LOG_LEVEL=debug only. */
const FRAMEWORK_CONTEXTS = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestFactory', 'NestApplication']);

/**
 * The serving process's logger: Nest's console logger at the configured levels, except that the
 * framework's own `log`-level start-up lines move to `debug`, so a start prints a few lines and the
 * admin token or demo key, not the route table.
 */
export class GatewayLogger extends ConsoleLogger {
  private readonly debugOn: boolean;

  constructor(levels: LogLevel[]) {
    super({ logLevels: levels, colors: colouredFor(process.stdout) });
    this.debugOn = levels.includes('debug');
  }

  override log(message: unknown, ...optionalParams: unknown[]): void {
    const context = optionalParams.at(-1);
    if (typeof context === 'string' && FRAMEWORK_CONTEXTS.has(context)) {
      if (this.debugOn) super.debug(message, ...optionalParams);
      return;
    }
    super.log(message, ...optionalParams);
  }
}
