/** An HTTP answer as the suites look at it: status, headers, the body as text, and as JSON when it is JSON (else null). */
export interface HttpAnswer {
  status: number;
  headers: Headers;
  json: any;
  text: string;
}

/** Reads a fetch response (global fetch's or undici's) whole into an HttpAnswer. */
export async function readAnswer(response: { status: number; headers: unknown; text(): Promise<string> }): Promise<HttpAnswer> {
  const text = await response.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  return { status: response.status, headers: response.headers as Headers, json, text };
}
