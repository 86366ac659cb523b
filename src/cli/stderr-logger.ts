import { ConsoleLogger, type LogLevel } from '@nestjs/common';
import { colouredFor } from '../log-colours.js';

/**
 * Logs of CLI commands go to stderr at the LOG_LEVEL asked for, so that stdout carries only the
 * command's result (JSON lines, NDJSON exports, reports) and can be piped.
 */
export class StderrLogger extends ConsoleLogger {
  constructor(level: string | undefined) {
    const order: LogLevel[] = ['error', 'warn', 'log', 'debug'];
    const index = order.indexOf((level ?? 'warn') as LogLevel);
    super('switchyard', { logLevels: order.slice(0, (index < 0 ? 1 : index) + 1), colors: colouredFor(process.stderr) });
  }

  protected override printMessages(messages: unknown[], context?: string, logLevel?: LogLevel, _stream?: 'stdout' | 'stderr', errorStack?: unknown, params?: Record<string, any>): void {
    super.printMessages(messages, context, logLevel, 'stderr', errorStack, params);
  }
}
