/**
 * An error the gateway answers with. Client formats render it in their own envelope; `code` is the
 * stable machine-readable reason (DESIGN §6 status table).
 */
export class GatewayError extends Error {
  override readonly name = 'GatewayError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly param: string | null = null,
    readonly headers: Record<string, string> = {},
    /** Extra machine-readable detail (e.g. the candidates tried). */
    readonly detail: Record<string, unknown> | null = null,
  ) {
    super(message);
  }

  /** The same error with more headers (a subclass keeps its own kind, so its clients' wording survives). */
  withHeaders(extra: Record<string, string>): GatewayError {
    return new GatewayError(this.status, this.code, this.message, this.param, Object.assign({}, this.headers, extra), this.detail);
  }
}

export const invalidRequest = (message: string, param: string | null = null) => new GatewayError(400, 'invalid_request', message, param);
export const unsupportedParameter = (param: string, why: string) =>
  new GatewayError(400, 'unsupported_parameter', `Unsupported parameter '${param}': ${why}`, param);
