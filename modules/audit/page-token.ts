import { type LogPosition, parseXid8, START } from '../../src/kernel/index.js';

/**
 * History pages are keyed by a position in the global order, carried as an opaque token. A plain number
 * is also accepted as `after`: the global position of an event, as users see it in every answer.
 */
export function encodePageToken(position: LogPosition): string {
  return Buffer.from(`${position.transactionId}:${position.globalPosition}`, 'utf8').toString('base64url');
}

export function decodePageToken(token: string): LogPosition | null {
  const text = Buffer.from(token, 'base64url').toString('utf8');
  const match = /^(\d{1,20}):(\d{1,16})$/.exec(text);
  if (!match) return null;
  const position: LogPosition = { transactionId: parseXid8(match[1]), globalPosition: Number(match[2]) };
  return encodePageToken(position) === token ? position : null;
}

export class PageTokenError extends Error {
  override readonly name = 'PageTokenError';
}

/** Resolves `after` (a page token or a global position) to a position to read after. */
export async function positionAfter(
  after: string | undefined,
  transactionOf: (globalPosition: number) => Promise<string | null>,
): Promise<LogPosition> {
  if (after === undefined || after === '' || after === '0') return START;
  if (/^\d{1,16}$/.test(after)) {
    const globalPosition = Number(after);
    const transactionId = await transactionOf(globalPosition);
    if (transactionId === null) throw new PageTokenError(`after=${after}: there is no event at global position ${after}`);
    return { transactionId: parseXid8(transactionId), globalPosition };
  }
  const position = decodePageToken(after);
  if (!position) throw new PageTokenError('after is neither a global position nor a page token from a previous answer');
  return position;
}
