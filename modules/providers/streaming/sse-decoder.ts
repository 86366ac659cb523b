export interface SseEvent {
  event: string | null;
  data: string;
  id: string | null;
}

export class SseOverflowError extends Error {
  override readonly name = 'SseOverflowError';
}

/**
 * Incremental Server-Sent Events decoder (WHATWG rules): correct at any chunk boundary, including a
 * multi-byte UTF-8 character or a CRLF split across chunks; comments (`:` lines, used as pings) are
 * skipped; multi-line `data` is joined with "\n". An event larger than `maxEventBytes` is an error
 * rather than unbounded buffering.
 */
export class SseDecoder {
  private readonly text = new TextDecoder('utf-8');
  private buffer = '';
  private pendingCr = false;
  private data: string[] = [];
  private dataLength = 0;
  private eventName: string | null = null;
  private lastId: string | null = null;

  constructor(private readonly maxEventBytes = 4 * 1024 * 1024) {}

  push(chunk: Uint8Array): SseEvent[] {
    return this.feed(this.text.decode(chunk, { stream: true }));
  }

  /** Flushes at end of stream: a final event without its blank line is still delivered. */
  end(): SseEvent[] {
    const events = this.feed(this.text.decode());
    if (this.buffer.length > 0) {
      this.line(this.buffer, events);
      this.buffer = '';
    }
    this.dispatch(events);
    return events;
  }

  private feed(input: string): SseEvent[] {
    const events: SseEvent[] = [];
    // An empty chunk (or one holding only part of a UTF-8 character) must not clear a pending CR:
    // the LF that completes that CRLF may still arrive in the next chunk.
    if (input.length === 0) return events;
    let text = input;
    if (this.pendingCr) {
      this.pendingCr = false;
      if (text.startsWith('\n')) text = text.slice(1);
    }
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const ch = text.charCodeAt(i);
      if (ch !== 10 && ch !== 13) continue;
      this.line(this.buffer + text.slice(start, i), events);
      this.buffer = '';
      if (ch === 13) {
        if (i + 1 < text.length) {
          if (text.charCodeAt(i + 1) === 10) i++;
        } else {
          this.pendingCr = true;
        }
      }
      start = i + 1;
    }
    this.buffer += text.slice(start);
    if (this.buffer.length + this.dataLength > this.maxEventBytes) {
      throw new SseOverflowError(`SSE event exceeds ${this.maxEventBytes} bytes`);
    }
    return events;
  }

  private line(line: string, events: SseEvent[]): void {
    if (line === '') {
      this.dispatch(events);
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'data':
        this.data.push(value);
        this.dataLength += value.length + 1;
        if (this.dataLength > this.maxEventBytes) throw new SseOverflowError(`SSE event exceeds ${this.maxEventBytes} bytes`);
        break;
      case 'event':
        this.eventName = value;
        break;
      case 'id':
        if (!value.includes('\u0000')) this.lastId = value;
        break;
      default:
        break; // `retry` and unknown fields are ignored
    }
  }

  private dispatch(events: SseEvent[]): void {
    if (this.data.length > 0) events.push({ event: this.eventName, data: this.data.join('\n'), id: this.lastId });
    this.data = [];
    this.dataLength = 0;
    this.eventName = null;
  }
}
