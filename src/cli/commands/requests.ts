import { RequestHistory } from '../../../modules/audit/request-history.js';
import { type RequestPage, RequestSearch, type RequestSearchQuery } from '../../../modules/audit/request-search.js';
import { REQUEST_SUMMARY_STATUSES, type RequestSummaryStatus } from '../../../projections/request-summaries/index.js';
import { readEnvironment } from '../../config/environment.js';
import { openLogReader } from '../../log-reader.js';
import { pageFromLog } from '../log-page.js';
import { writeOut } from '../output.js';
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

export type RequestListOptions = RequestSearchQuery;

/** The flags of `requests list` checked as the admin API checks its query; a string says what is wrong. */
export function requestListOptions(values: Record<string, string | boolean | string[] | undefined>): RequestListOptions | string {
  const text = (name: string) => (typeof values[name] === 'string' && values[name] !== '' ? values[name] as string : undefined);
  const limit = Number(text('limit') ?? '50');
  if (!Number.isInteger(limit) || limit < 1 || limit > 200) return '--limit must be an integer from 1 to 200';
  const status = text('status');
  if (status !== undefined && !(REQUEST_SUMMARY_STATUSES as readonly string[]).includes(status)) return `--status must be one of ${REQUEST_SUMMARY_STATUSES.join(', ')}`;
  const time = (name: 'from' | 'to') => {
    const value = text(name);
    if (value === undefined) return undefined;
    const at = new Date(value);
    return Number.isNaN(at.getTime()) ? null : at;
  };
  const from = time('from');
  const to = time('to');
  if (from === null || to === null) return '--from and --to must be ISO 8601 times';
  if (from && to && from >= to) return '--from must be before --to';
  return {
    tenantId: text('tenant'), keyId: text('key'), alias: text('alias'), status: status as RequestSummaryStatus | undefined, from, to, limit, pageToken: text('page-token'),
  };
}

/**
 * One page of `GET /admin/v1/requests` as JSON lines, the next page's token on stderr. Through a running
 * server when the embedded store is its own; otherwise from `request_summaries` directly (as current as the
 * projection that keeps it — a stopped embedded gateway's table is as it left it).
 */
export async function requestsList(options: RequestListOptions): Promise<number> {
  const environment = readEnvironment();
  const server = runningServer(environment);
  if (server) {
    const params = new URLSearchParams();
    const set = (name: string, value: string | undefined) => value !== undefined && params.set(name, value);
    set('tenant', options.tenantId);
    set('key', options.keyId);
    set('alias', options.alias);
    set('status', options.status);
    set('from', options.from?.toISOString());
    set('to', options.to?.toISOString());
    set('limit', String(options.limit));
    set('pageToken', options.pageToken);
    return printPage(await server.get<RequestPage>(`/admin/v1/requests?${params.toString()}`));
  }
  return pageFromLog(environment, async (platform) => printPage(await new RequestSearch(platform.database).page(options)));
}

async function printPage(page: RequestPage): Promise<number> {
  for (const request of page.requests) await writeOut(`${JSON.stringify(request)}\n`);
  process.stderr.write(page.nextPageToken ? `next: --page-token ${page.nextPageToken}\n` : 'next: none (the last page)\n');
  return 0;
}
