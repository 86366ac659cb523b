import { RequestHistory } from '../../../modules/audit/request-history.js';
import { readEnvironment } from '../../config/environment.js';
import { openPlatform } from '../../platform.js';

/** `switchyard requests show ID`: the reconstruction `GET /admin/v1/requests/{id}` answers, as JSON. */
export async function requestsShow(requestId: string): Promise<number> {
  const platform = await openPlatform(readEnvironment(), { runDurable: false });
  try {
    const history = await new RequestHistory(platform.store, platform.database).show(requestId);
    if (!history) {
      process.stderr.write(`No request ${requestId} is recorded.\n`);
      return 1;
    }
    process.stdout.write(`${JSON.stringify(history, null, 2)}\n`);
    return 0;
  } finally {
    await platform.close();
  }
}
