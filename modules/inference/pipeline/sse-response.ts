import type { ServerResponse } from 'node:http';

/**
 * The client side of a streamed answer, written straight to the socket: headers go out with the first
 * output (so a failure before it can still fall back or become a plain error), writes respect
 * backpressure, and a client that goes away is noticed at once.
 */
export class SseResponse {
  private opened = false;
  private gone = false;
  private readonly closeListeners: Array<() => void> = [];

  constructor(
    private readonly raw: ServerResponse,
    private readonly headers: Record<string, string>,
  ) {
    raw.on('close', () => {
      if (!raw.writableFinished) {
        this.gone = true;
        for (const listener of this.closeListeners) listener();
      }
    });
  }

  get isOpen(): boolean {
    return this.opened;
  }

  /** True once the client disconnected before the response finished. */
  get clientGone(): boolean {
    return this.gone;
  }

  onClientGone(listener: () => void): void {
    if (this.gone) listener();
    else this.closeListeners.push(listener);
  }

  open(contentType: string): void {
    if (this.opened) return;
    this.opened = true;
    this.raw.writeHead(200, Object.assign({}, this.headers, {
      'content-type': contentType,
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    }));
  }

  /** Resolves when the data is handed to the socket or buffered within its high-water mark. */
  write(data: string): Promise<void> {
    if (this.gone || data.length === 0) return Promise.resolve();
    if (this.raw.write(data)) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.raw.off('drain', done);
        this.raw.off('close', done);
        resolve();
      };
      this.raw.on('drain', done);
      this.raw.on('close', done);
    });
  }

  /**
   * Sends what was written so far now. Node corks the socket at a response's first write of a tick and
   * uncorks it on the next tick, after the microtask queue has run dry: when a provider's whole answer
   * arrives in one read (as from a fast or caching upstream), the first frame would otherwise wait for every
   * later event of that read to be translated and encoded. One early system call buys the client its first
   * byte that much sooner; the frames after it are still gathered into one write.
   */
  flush(): void {
    const socket = this.raw.socket;
    if (socket && socket.writableCorked > 0) socket.uncork();
  }

  end(data = ''): void {
    if (this.gone) return;
    this.raw.end(data);
  }
}
