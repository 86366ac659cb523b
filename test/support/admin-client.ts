import { type HttpAnswer, readAnswer } from './http-answer.js';

export type AdminResponse = HttpAnswer;

/**
 * A small client for `/admin/v1`: sends the admin token, JSON bodies and optional extra headers (e.g.
 * If-Match), and keeps a transcript of every response body so tests can grep them for secrets.
 */
export class AdminClient {
  readonly transcript: string[] = [];

  constructor(
    readonly baseUrl: string,
    private readonly token: string | null,
  ) {}

  get(path: string, headers: Record<string, string> = {}): Promise<AdminResponse> {
    return this.send('GET', path, undefined, headers);
  }

  post(path: string, body?: unknown, headers: Record<string, string> = {}): Promise<AdminResponse> {
    return this.send('POST', path, body, headers);
  }

  put(path: string, body?: unknown, headers: Record<string, string> = {}): Promise<AdminResponse> {
    return this.send('PUT', path, body, headers);
  }

  patch(path: string, body?: unknown, headers: Record<string, string> = {}): Promise<AdminResponse> {
    return this.send('PATCH', path, body, headers);
  }

  delete(path: string, headers: Record<string, string> = {}): Promise<AdminResponse> {
    return this.send('DELETE', path, undefined, headers);
  }

  withToken(token: string | null): AdminClient {
    const client = new AdminClient(this.baseUrl, token);
    client.transcript.push = (...items: string[]) => this.transcript.push(...items);
    return client;
  }

  async send(method: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<AdminResponse> {
    const response = await fetch(`${this.baseUrl}/admin/v1${path}`, {
      method,
      headers: {
        ...(this.token ? { authorization: `Bearer ${this.token}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const answer = await readAnswer(response);
    this.transcript.push(answer.text);
    return answer;
  }
}

/** Polls `check` every 25 ms until it returns true; resolves to the elapsed milliseconds, or rejects after `timeoutMs`. */
export async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
