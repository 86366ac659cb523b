import { Inject, Injectable } from '@nestjs/common';
import { type Database, DATABASE, SqlEventStore } from '../../src/kernel/index.js';
import { encodePageToken, positionAfter } from './page-token.js';
import { eventView } from './event-view.js';

export interface EventPageQuery {
  after?: string;
  stream?: string;
  types?: readonly string[];
  limit: number;
}

/** `GET /admin/v1/events` and `switchyard events list`: the global log, paged by position, gap-free. */
@Injectable()
export class EventHistory {
  constructor(
    private readonly store: SqlEventStore,
    @Inject(DATABASE) private readonly database: Database,
  ) {}

  async page(query: EventPageQuery) {
    const from = await positionAfter(query.after, (position) => this.transactionOf(position));
    const page = await this.store.readAll(from, {
      limit: query.limit,
      ...(query.types && query.types.length ? { types: query.types } : {}),
      ...(query.stream ? { streamId: query.stream } : {}),
    });
    return {
      data: page.events.map(eventView),
      // Always a token: at the end of the log it is where to poll from next.
      next: encodePageToken(page.next),
      caughtUp: page.caughtUp,
    };
  }

  async transactionOf(globalPosition: number): Promise<string | null> {
    const rows = await this.database.query<{ transaction_id: string }>(
      `SELECT transaction_id::text AS transaction_id FROM events WHERE global_position = $1`, [globalPosition],
    );
    return rows[0]?.transaction_id ?? null;
  }
}
