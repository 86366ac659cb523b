import { PageTokenError } from '../../modules/audit/page-token.js';
import type { Environment } from '../config/environment.js';
import { type LogReader, openLogReader } from '../log-reader.js';

/**
 * A page read straight from the log (no server running): the reader opened for the call and closed after it,
 * and a page token the reader refuses answered as a usage error (exit 2, its message on stderr).
 */
export async function pageFromLog(environment: Environment, read: (reader: LogReader) => Promise<number>): Promise<number> {
  const reader = await openLogReader(environment);
  try {
    return await read(reader);
  } catch (error) {
    if (error instanceof PageTokenError) {
      process.stderr.write(`${error.message}\n`);
      return 2;
    }
    throw error;
  } finally {
    await reader.close();
  }
}
