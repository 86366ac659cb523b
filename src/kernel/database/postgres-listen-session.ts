import pg from 'pg';

const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 5_000;

/**
 * One dedicated session that LISTENs on a channel and keeps doing so: when the server drops it
 * (restart, pg_terminate_backend, network), it reconnects with backoff. Notifications sent while it was
 * away are lost, so after every reconnect it calls `onNotify('')` — "something may have committed" —
 * and the subscribers catch up by reading the log (polling covers the gap too).
 */
export class PostgresListenSession {
  private client: pg.Client | null = null;
  private stopped = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private retryDelay = FIRST_RETRY_MS;
  /** When the session was lost; null while it is listening. */
  private lostAt: number | null = null;

  constructor(
    private readonly url: string,
    private readonly channel: string,
    private readonly onNotify: (payload: string) => void,
  ) {}

  get listening(): boolean {
    return this.lostAt === null && this.client !== null;
  }

  /** Milliseconds since the session was lost (0 while listening). */
  get downForMs(): number {
    return this.lostAt === null ? 0 : Date.now() - this.lostAt;
  }

  /** The first connection; a failure here is the caller's (the process is still starting). */
  async start(): Promise<void> {
    try {
      await this.connect();
    } catch (error) {
      await this.stop();
      throw error;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url, application_name: 'switchyard-listen', keepAlive: true });
    let lost = false;
    const onLost = () => {
      if (lost) return;
      lost = true;
      if (this.client === client) this.client = null;
      client.end().catch(() => undefined);
      this.lostAt ??= Date.now();
      this.scheduleReconnect();
    };
    // Every pg.Client needs an error listener: without one, a dropped connection throws and ends the process.
    client.on('error', onLost);
    client.on('end', onLost);
    client.on('notification', (message) => {
      if (message.channel === this.channel) this.onNotify(message.payload ?? '');
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${quoteIdentifier(this.channel)}`);
    } catch (error) {
      onLost();
      throw error;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    const wasLost = this.lostAt !== null;
    this.lostAt = null;
    this.retryDelay = FIRST_RETRY_MS;
    if (wasLost) this.onNotify('');
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.retryTimer) return;
    const delay = this.retryDelay;
    this.retryDelay = Math.min(MAX_RETRY_MS, this.retryDelay * 2);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (!this.stopped) void this.connect().catch(() => undefined); // a failed attempt schedules the next
    }, delay);
    this.retryTimer.unref();
  }
}

function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
