import { RequestHistory } from '../../../modules/audit/request-history.js';
import { readEnvironment } from '../../config/environment.js';
import { openLogReader } from '../../log-reader.js';
import { ServerRefusedError, runningServer } from '../running-server.js';

/** `switchyard requests show ID`: the reconstruction `GET /admin/v1/requests/{id}` answers, as JSON. */
export async function requestsShow(requestId: string): Promise<number> {
  const environment = readEnvironment();
  const server = runningServer(environment);
  let history: unknown;
  if (server) {
    history = await server.get(`/admin/v1/requests/${encodeURIComponent(requestId)}`).catch((error: unknown) => {
      if (error instanceof ServerRefusedError && error.status === 404) return null;
      throw error;
    });
  } else {
    const platform = await openLogReader(environment);
    try {
      history = await new RequestHistory(platform.store, platform.database).show(requestId);
    } finally {
      await platform.close();
    }
  }
  if (!history) {
    process.stderr.write(`No request ${requestId} is recorded.\n`);
    return 1;
  }
  process.stdout.write(`${JSON.stringify(history, null, 2)}\n`);
  return 0;
}
