import { Agent, fetch } from 'undici';
import { type HttpAnswer, readAnswer } from './http-answer.js';

export type ConsoleResponse = HttpAnswer;

/**
 * What the console's page does over HTTP, without a browser: keeps the cookies the gateway sets (per
 * name, like a cookie jar for one origin), sends them back, and sends the session's CSRF token on changes
 * when asked to. Redirects are never followed (tests look at each hop). `localAddress` makes the requests
 * come from another loopback address (127.0.0.x), which the gateway sees as another client.
 */
export class ConsoleBrowser {
  readonly cookies = new Map<string, string>();
  csrfToken: string | null = null;
  private readonly dispatcher: Agent;

  constructor(readonly baseUrl: string, localAddress?: string) {
    this.dispatcher = new Agent(localAddress ? { localAddress } : {});
  }

  async signInWithToken(token: string): Promise<ConsoleResponse> {
    const response = await this.send('POST', '/console/api/session', { token });
    if (response.status === 200) this.csrfToken = response.json.csrfToken;
    return response;
  }

  get(path: string, headers: Record<string, string> = {}): Promise<ConsoleResponse> {
    return this.send('GET', path, undefined, headers);
  }

  /** A change with the session's CSRF token (unless `csrf: false`). */
  change(method: string, path: string, body?: unknown, options: { csrf?: boolean; headers?: Record<string, string> } = {}): Promise<ConsoleResponse> {
    const headers = { ...(options.csrf !== false && this.csrfToken ? { 'x-csrf-token': this.csrfToken } : {}), ...options.headers };
    return this.send(method, path, body, headers);
  }

  /** `body`: JSON, or a form (URLSearchParams) as an HTML form posts it. */
  async send(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ConsoleResponse> {
    const url = path.startsWith('http') ? path : `${this.baseUrl}${path}`;
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await fetch(url, {
      method,
      redirect: 'manual',
      dispatcher: this.dispatcher,
      headers: {
        ...(cookie ? { cookie } : {}),
        ...(body instanceof URLSearchParams ? { 'content-type': 'application/x-www-form-urlencoded' } : body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : body instanceof URLSearchParams ? body.toString() : JSON.stringify(body),
    });
    this.remember(response.headers.getSetCookie());
    return readAnswer(response);
  }

  /** Applies Set-Cookie lines: a value sets the cookie, an empty value or Max-Age=0 removes it. */
  remember(lines: string[]): void {
    for (const line of lines) {
      const [pair] = line.split(';');
      const separator = pair.indexOf('=');
      const name = pair.slice(0, separator).trim();
      const value = pair.slice(separator + 1).trim();
      if (value === '' || /;\s*max-age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }
}
