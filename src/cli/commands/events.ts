import { EventHistory } from '../../../modules/audit/event-history.js';
// The file, not the relay's index: `switchyard events` has no use for the broker clients that index loads.
import { eventView } from '../../../modules/relay/event-view.js';
import { readEnvironment } from '../../config/environment.js';
import { type LogPosition, START } from '../../kernel/event-store/event-store.js';
import { openLogReader } from '../../log-reader.js';
import { pageFromLog } from '../log-page.js';
import { writeOut } from '../output.js';
import { type RunningServer, runningServer } from '../running-server.js';

type EventLine = ReturnType<typeof eventView>;

interface EventPage {
  data: EventLine[];
  next: string;
  caughtUp: boolean;
}

export interface TailOptions {
  from: number;
  follow: boolean;
  types: string[] | null;
  stream?: string | null;
}

/**
 * Prints the global log as JSON lines (the admin API's event view) from a position; with --follow keeps
 * printing new events. With the embedded store held by a running server, it reads through that server.
 */
export async function eventsTail(options: TailOptions): Promise<number> {
  const environment = readEnvironment();
  let stop = false;
  process.on('SIGINT', () => (stop = true));
  const server = runningServer(environment);
  if (server) return tailThrough(server, options, () => stop);
  const platform = await openLogReader(environment);
  try {
    let position: LogPosition = START;
    for (;;) {
      const page = await platform.store.readAll(position, {
        limit: 500, types: options.types ?? undefined, ...(options.stream ? { streamId: options.stream } : {}),
      });
      for (const event of page.events) if (event.globalPosition >= options.from) await writeOut(line(eventView(event)));
      position = page.next;
      if (page.caughtUp) {
        if (!options.follow || stop) return 0;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  } finally {
    await platform.close();
  }
}

async function tailThrough(server: RunningServer, options: TailOptions, stopped: () => boolean): Promise<number> {
  let after: string | null = null;
  for (;;) {
    const page: EventPage = await server.get<EventPage>(`/admin/v1/events?${query({ after, limit: '1000', type: options.types?.join(','), stream: options.stream ?? undefined })}`);
    for (const event of page.data) if (event.globalPosition >= options.from) await writeOut(line(event));
    after = page.next;
    if (page.caughtUp) {
      if (!options.follow || stopped()) return 0;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

export async function eventsRead(streamId: string): Promise<number> {
  const environment = readEnvironment();
  const server = runningServer(environment);
  let events: EventLine[] = [];
  if (server) {
    for (let after: string | null = null; ;) {
      const page: EventPage = await server.get<EventPage>(`/admin/v1/events?${query({ after, limit: '1000', stream: streamId })}`);
      events.push(...page.data);
      after = page.next;
      if (page.caughtUp) break;
    }
  } else {
    const platform = await openLogReader(environment);
    try {
      events = (await platform.store.readStream(streamId)).map(eventView);
    } finally {
      await platform.close();
    }
  }
  if (events.length === 0) {
    process.stderr.write(`Stream ${streamId} has no events.\n`);
    return 1;
  }
  for (const event of events) await writeOut(line(event));
  return 0;
}

/** One page of `GET /admin/v1/events` as JSON lines; the token for the next page goes to stderr. */
export async function eventsList(options: { after?: string; stream?: string; types?: string[]; limit: number }): Promise<number> {
  const environment = readEnvironment();
  const server = runningServer(environment);
  if (server) {
    const page = await server.get<EventPage>(`/admin/v1/events?${query({ after: options.after, stream: options.stream, type: options.types?.join(','), limit: String(options.limit) })}`);
    return printPage(page);
  }
  return pageFromLog(environment, async (platform) => printPage(await new EventHistory(platform.store, platform.database).page(options)));
}

async function printPage(page: EventPage): Promise<number> {
  for (const event of page.data) await writeOut(line(event));
  process.stderr.write(`next: --after ${page.next}${page.caughtUp ? ' (end of the log)' : ''}\n`);
  return 0;
}

function line(event: EventLine): string {
  return `${JSON.stringify(event)}\n`;
}

function query(params: Record<string, string | null | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== null && value !== undefined && value !== '') search.set(name, value);
  return search.toString();
}
