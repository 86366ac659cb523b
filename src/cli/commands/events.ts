import { EventHistory } from '../../../modules/audit/event-history.js';
import { PageTokenError } from '../../../modules/audit/page-token.js';
import { readEnvironment } from '../../config/environment.js';
import { type LogPosition, type RecordedEvent, START } from '../../kernel/event-store/event-store.js';
import { openPlatform } from '../../platform.js';

/** Prints the global log as JSON lines from a position; with --follow keeps printing new events. */
export async function eventsTail(options: { from: number; follow: boolean; types: string[] | null; stream?: string | null }): Promise<number> {
  const platform = await openPlatform(readEnvironment(), { runDurable: false });
  let stop = false;
  process.on('SIGINT', () => (stop = true));
  try {
    let position: LogPosition = START;
    for (;;) {
      const page = await platform.store.readAll(position, {
        limit: 500, types: options.types ?? undefined, ...(options.stream ? { streamId: options.stream } : {}),
      });
      for (const event of page.events) if (event.globalPosition >= options.from) process.stdout.write(`${eventLine(event)}\n`);
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

export async function eventsRead(streamId: string): Promise<number> {
  const platform = await openPlatform(readEnvironment(), { runDurable: false });
  try {
    const events = await platform.store.readStream(streamId);
    if (events.length === 0) {
      process.stderr.write(`Stream ${streamId} has no events.\n`);
      return 1;
    }
    for (const event of events) process.stdout.write(`${eventLine(event)}\n`);
    return 0;
  } finally {
    await platform.close();
  }
}

/** One page of `GET /admin/v1/events` as JSON lines; the token for the next page goes to stderr. */
export async function eventsList(options: { after?: string; stream?: string; types?: string[]; limit: number }): Promise<number> {
  const platform = await openPlatform(readEnvironment(), { runDurable: false });
  try {
    const page = await new EventHistory(platform.store, platform.database).page(options);
    for (const event of page.data) process.stdout.write(`${JSON.stringify(event)}\n`);
    process.stderr.write(`next: --after ${page.next}${page.caughtUp ? ' (end of the log)' : ''}\n`);
    return 0;
  } catch (error) {
    if (error instanceof PageTokenError) {
      process.stderr.write(`${error.message}\n`);
      return 2;
    }
    throw error;
  } finally {
    await platform.close();
  }
}

/** One JSON line per event; the transaction id (an xid8, a bigint here) as its decimal string. */
function eventLine(event: RecordedEvent): string {
  return JSON.stringify({ ...event, transactionId: event.transactionId.toString() });
}
