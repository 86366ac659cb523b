import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';

/** One HTTP/1.1 exchange over a bare socket, for requests no HTTP client would send. */
export interface RawExchange {
  /** Everything the server sent. */
  text: string;
  /** The first response's status, or null when the server sent nothing. */
  status: number | null;
  headers: Record<string, string>;
  /** The first response's body, parsed as JSON when it is JSON. */
  json: any;
  /** The server closed the connection (rather than the client giving up). */
  closedByServer: boolean;
  /** From the last byte written to the connection's close. */
  closedAfterMs: number;
}

export interface RawOptions {
  /** The client gives up (and destroys the socket) after this long. */
  giveUpMs?: number;
  /** Called once the socket is connected and the first bytes are written (e.g. to keep writing a body). */
  then?: (socket: Socket) => void;
  /** Settle as soon as one whole response has arrived, without waiting for the server to close. */
  untilResponse?: boolean;
}

export function rawExchange(url: string, payload: string | Buffer | null, options: RawOptions = {}): Promise<RawExchange> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    let lastWrite = Date.now();
    let gaveUp = false;
    socket.on('connect', () => {
      if (payload !== null) socket.write(payload, () => (lastWrite = Date.now()));
      options.then?.(socket);
    });
    let settled = false;
    const settle = (closedByServer: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...parseResponse(Buffer.concat(chunks).toString('utf8')), closedByServer, closedAfterMs: Date.now() - lastWrite });
    };
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      if (options.untilResponse && isComplete(Buffer.concat(chunks).toString('utf8'))) {
        settle(false);
        socket.destroy();
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => settle(!gaveUp));
    const timer = setTimeout(() => {
      gaveUp = true;
      socket.destroy();
    }, options.giveUpMs ?? 10_000);
  });
}

function isComplete(text: string): boolean {
  const head = text.indexOf('\r\n\r\n');
  if (head < 0) return false;
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(text.slice(0, head))?.[1];
  return length !== undefined && Buffer.byteLength(text.slice(head + 4)) >= Number(length);
}

export function parseResponse(text: string): Pick<RawExchange, 'text' | 'status' | 'headers' | 'json'> {
  const head = text.indexOf('\r\n\r\n');
  if (head < 0) return { text, status: null, headers: {}, json: null };
  const [statusLine, ...lines] = text.slice(0, head).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? 0);
  let json: unknown = null;
  try {
    json = JSON.parse(Buffer.from(text.slice(head + 4)).subarray(0, length).toString('utf8'));
  } catch {
    json = null;
  }
  return { text, status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1] ?? NaN), headers, json };
}

/** The soft limit on open files of this process (Linux), or null when it cannot be read. */
export function openFileLimit(): number | null {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8').split('\n').find((l) => l.startsWith('Max open files'));
    const soft = line?.split(/\s{2,}/)[1];
    return soft && /^\d+$/.test(soft) ? Number(soft) : null;
  } catch {
    return null;
  }
}
