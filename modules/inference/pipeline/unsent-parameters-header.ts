import type { ServerResponse } from 'node:http';
import type { ClientFormat } from '../formats/client-format.js';

/** Names, in the client format's spelling, the parameters the serving deployment accepted without sending. */
export const UNSENT_PARAMETERS_HEADER = 'x-switchyard-unsent-parameters';

/**
 * Sets (or, after a fallback to a deployment that sends everything, clears) the header before the attempt's
 * answer is written: a client can see which of its hints went nowhere on this route, and the parameter tables
 * (docs/providers.md) say why.
 */
export function noteUnsentParameters(raw: ServerResponse, format: ClientFormat, unsent: readonly string[]): void {
  if (raw.headersSent) return;
  if (unsent.length === 0) {
    raw.removeHeader(UNSENT_PARAMETERS_HEADER);
    return;
  }
  raw.setHeader(UNSENT_PARAMETERS_HEADER, unsent.map((parameter) => format.parameterName?.(parameter) ?? parameter).join(', '));
}
