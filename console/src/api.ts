/**
 * The console's only way to the server: same-origin fetch with the session cookie. The CSRF token of the
 * session rides on every change; no token of any kind is kept in storage.
 */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly fields: Array<{ path: string; message: string }> = [],
  ) {
    super(message);
  }
}

let csrfToken: string | null = null;
let onSessionLost: (() => void) | null = null;

export function useCsrfToken(token: string | null): void {
  csrfToken = token;
}

/** Called when the server answers 401 session_required: the page goes back to sign-in. */
export function whenSessionLost(handler: () => void): void {
  onSessionLost = handler;
}

type Query = Record<string, string | number | undefined | null | false>;

export function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== '' && value !== false) params.set(name, String(value));
  }
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

export interface CallOptions {
  method?: string;
  body?: unknown;
  query?: Query;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export async function call(path: string, options: CallOptions = {}): Promise<Response> {
  const method = options.method ?? 'GET';
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && method !== 'HEAD' && csrfToken) headers['x-csrf-token'] = csrfToken;
  const response = await fetch(withQuery(path, options.query), {
    method,
    headers,
    credentials: 'same-origin',
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    signal: options.signal,
  });
  if (!response.ok) throw await errorOf(response);
  return response;
}

export async function api<T>(path: string, options: CallOptions = {}): Promise<T> {
  const response = await call(path, options);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

async function errorOf(response: Response): Promise<ApiError> {
  let code = `http_${response.status}`;
  let message = `The server answered ${response.status} ${response.statusText}.`;
  let fields: ApiError['fields'] = [];
  try {
    const body = (await response.json()) as { error?: { code?: string; message?: string; fields?: ApiError['fields'] | null } };
    if (body.error?.code) code = body.error.code;
    if (body.error?.message) message = body.error.message;
    if (Array.isArray(body.error?.fields)) fields = body.error.fields;
  } catch {
    // Not the admin API's envelope (a proxy's page, an empty body): the status line says enough.
  }
  if (response.status === 401 && code === 'session_required') onSessionLost?.();
  return new ApiError(response.status, code, message, fields);
}

/** Saves a response body as a file through a temporary object URL (blob: is same-origin for the CSP). */
export async function download(path: string, query: Query, fallbackName: string): Promise<void> {
  const response = await call(path, { query, headers: { accept: '*/*' } });
  const disposition = response.headers.get('content-disposition') ?? '';
  const name = /filename="([^"]+)"/.exec(disposition)?.[1] ?? fallbackName;
  const url = URL.createObjectURL(await response.blob());
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
