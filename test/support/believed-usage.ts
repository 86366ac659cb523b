import type { TokenUsage } from '../../events/index.js';
import { type ReportedUsage, type StreamEvent, checkReportedPrompt, checkReportedUsage, reportedUsageOf } from '../../modules/canonical/index.js';
import type { ClientStreamEncoder } from '../../modules/inference/formats/client-stream-encoder.js';

/** A bound no sound fixture comes near. */
const GENEROUS = { input: 10_000_000, output: 10_000_000 };

/**
 * A provider's reported usage as the pipeline bills it when every count is believable; a test fails
 * (throws) if the boundary would not believe it, so fixtures stay honest.
 */
export function believedUsage(reported: ReportedUsage | null | undefined): TokenUsage {
  if (!reported) throw new Error('the provider reported no usage');
  const checked = checkReportedUsage(reported, GENEROUS, { input: 0, output: 0 });
  if (checked.implausible) throw new Error(`implausible usage: ${checked.implausible.reason}`);
  return checked.usage;
}

/** Canonical counts as a provider report (what an adapter would have produced for them). */
export const reported = reportedUsageOf;

/**
 * Encodes provider stream events as the stream relay hands them to a client encoder: counts are not
 * encoded; a prompt count reported before the output reaches the encoder checked (`promptCounted`).
 */
export function encodeRelayed(encoder: ClientStreamEncoder, events: readonly StreamEvent[]): string {
  let out = '';
  for (const event of events) {
    if (event.type === 'usage') continue;
    if (event.type === 'prompt_usage') {
      const prompt = checkReportedPrompt(event.usage, GENEROUS);
      if (prompt) encoder.promptCounted?.(prompt);
      continue;
    }
    out += encoder.encode(event);
  }
  return out;
}

/**
 * The value with every provider report in it (a response's or a stream event's `usage`, a prompt count)
 * replaced by the counts the pipeline bills, so fixtures can be compared with plain numbers.
 */
export function withBelievedUsage<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item) => withBelievedUsage(item)) as T;
  if (value === null || typeof value !== 'object') return value;
  const record = value as Record<string, unknown>;
  if (Array.isArray(record.input) && Array.isArray(record.cachedInput) && Array.isArray(record.cacheWrite)) {
    if (!('output' in record)) return checkReportedPrompt(record as unknown as Parameters<typeof checkReportedPrompt>[0], GENEROUS) as T;
    return believedUsage(record as unknown as ReportedUsage) as T;
  }
  return Object.fromEntries(Object.entries(record).map(([key, item]) => [key, withBelievedUsage(item)])) as T;
}
