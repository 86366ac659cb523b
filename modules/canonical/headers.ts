/** Request or response headers as Node, Fastify and undici hand them over: a header sent twice arrives as an array. */
export type HeaderMap = Record<string, string | string[] | undefined>;

/** The first value of a header that may repeat. */
export function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
