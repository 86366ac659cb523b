import { Decimal } from 'decimal.js';
import { type ProviderUsage, UsageExportError, bucketDay, count } from './provider-usage.js';

/**
 * Anthropic's Admin API reports (one page, or an array of pages):
 *  - `GET /v1/organizations/usage_report/messages?bucket_width=1d&group_by[]=model` — buckets
 *    {starting_at, ending_at, results} with uncached_input_tokens, cache_read_input_tokens,
 *    cache_creation {ephemeral_5m_input_tokens, ephemeral_1h_input_tokens}, output_tokens, model;
 *  - `GET /v1/organizations/cost_report?group_by[]=description` — results with amount (a decimal
 *    string in cents: "123.45" is $1.23), currency and model.
 * Switchyard counts input as uncached + cache reads + cache writes, the way it bills them.
 */
export function parseAnthropicExport(document: unknown, file: string): ProviderUsage[] {
  const pages = Array.isArray(document) ? document : [document];
  const records: ProviderUsage[] = [];
  pages.forEach((page, pageIndex) => {
    const where = `${file}${pages.length > 1 ? ` page ${pageIndex + 1}` : ''}`;
    const buckets = (page as { data?: unknown })?.data;
    if (!Array.isArray(buckets)) throw new UsageExportError(`${where}: not an Anthropic usage or cost report (expected {"data":[buckets]})`);
    buckets.forEach((bucket: Record<string, unknown>, bucketIndex) => {
      const at = `${where} bucket ${bucketIndex + 1}`;
      if (typeof bucket.starting_at !== 'string') throw new UsageExportError(`${at}: no starting_at`);
      const day = bucketDay(new Date(bucket.starting_at), typeof bucket.ending_at === 'string' ? new Date(bucket.ending_at) : null, at);
      if (!Array.isArray(bucket.results)) throw new UsageExportError(`${at}: no results`);
      for (const result of bucket.results as Array<Record<string, unknown>>) {
        if ('uncached_input_tokens' in result) {
          if (typeof result.model !== 'string') throw new UsageExportError(`${at}: usage is not grouped by model (export with group_by[]=model)`);
          const creation = (result.cache_creation ?? {}) as Record<string, unknown>;
          const cacheWrite = count(creation.ephemeral_5m_input_tokens ?? result.cache_creation_5m_input_tokens, at) +
            count(creation.ephemeral_1h_input_tokens ?? result.cache_creation_1h_input_tokens, at);
          const cacheRead = count(result.cache_read_input_tokens, at);
          records.push({
            day, model: result.model, costUsd: null,
            tokens: { input: count(result.uncached_input_tokens, at) + cacheRead + cacheWrite, cachedInput: cacheRead, cacheWrite, output: count(result.output_tokens, at) },
          });
        } else if ('amount' in result) {
          if (String(result.currency).toUpperCase() !== 'USD') throw new UsageExportError(`${at}: cost in ${String(result.currency)}; only USD is reconciled`);
          if (typeof result.amount !== 'string' || !/^-?\d+(\.\d+)?$/.test(result.amount)) throw new UsageExportError(`${at}: amount must be a decimal string (cents)`);
          const model = typeof result.model === 'string' ? result.model : typeof result.description === 'string' ? result.description : null;
          if (model === null) throw new UsageExportError(`${at}: costs are not grouped by description (export with group_by[]=description)`);
          records.push({ day, model, tokens: null, costUsd: new Decimal(result.amount).div(100) });
        } else {
          throw new UsageExportError(`${at}: a result that is neither usage (uncached_input_tokens) nor cost (amount)`);
        }
      }
    });
  });
  return records;
}
