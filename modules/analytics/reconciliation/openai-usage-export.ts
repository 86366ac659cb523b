import { Decimal } from 'decimal.js';
import { type ProviderUsage, UsageExportError, bucketDay, count } from './provider-usage.js';

/**
 * OpenAI's organization usage and cost exports, as their Admin API returns them (one page, or an array
 * of pages as a paginating script saves them):
 *  - `GET /v1/organization/usage/completions?bucket_width=1d&group_by=model` — buckets of
 *    `organization.usage.completions.result` with input_tokens (cached included), input_cached_tokens,
 *    output_tokens, model;
 *  - `GET /v1/organization/costs?group_by=line_item` — buckets of `organization.costs.result` with
 *    amount {value, currency} and a line_item such as "gpt-4o-mini-2024-07-18, input".
 */
export function parseOpenAiExport(document: unknown, file: string): ProviderUsage[] {
  const pages = Array.isArray(document) ? document : [document];
  const records: ProviderUsage[] = [];
  pages.forEach((page, pageIndex) => {
    const where = `${file}${pages.length > 1 ? ` page ${pageIndex + 1}` : ''}`;
    const buckets = (page as { data?: unknown })?.data;
    if ((page as { object?: string })?.object !== 'page' || !Array.isArray(buckets)) {
      throw new UsageExportError(`${where}: not an OpenAI usage or costs page (expected {"object":"page","data":[buckets]})`);
    }
    buckets.forEach((bucket: Record<string, unknown>, bucketIndex) => {
      const at = `${where} bucket ${bucketIndex + 1}`;
      const day = bucketDay(new Date(Number(bucket.start_time) * 1000), bucket.end_time ? new Date(Number(bucket.end_time) * 1000) : null, at);
      const results = (bucket.results ?? bucket.result) as Array<Record<string, unknown>> | undefined;
      if (!Array.isArray(results)) throw new UsageExportError(`${at}: no results`);
      for (const result of results) {
        if (result.object === 'organization.usage.completions.result') {
          if (typeof result.model !== 'string') throw new UsageExportError(`${at}: usage is not grouped by model (export with group_by=model)`);
          records.push({
            day, model: result.model, costUsd: null,
            tokens: { input: count(result.input_tokens, at), cachedInput: count(result.input_cached_tokens, at), cacheWrite: null, output: count(result.output_tokens, at) },
          });
        } else if (result.object === 'organization.costs.result') {
          const amount = result.amount as { value?: unknown; currency?: unknown } | undefined;
          if (!amount || typeof amount.value !== 'number') throw new UsageExportError(`${at}: a cost without amount.value`);
          if (String(amount.currency).toLowerCase() !== 'usd') throw new UsageExportError(`${at}: cost in ${String(amount.currency)}; only USD is reconciled`);
          if (typeof result.line_item !== 'string') throw new UsageExportError(`${at}: costs are not grouped by line item (export with group_by=line_item)`);
          // "gpt-4o-mini-2024-07-18, input" → the model; other line items (tools, images) stay as they are.
          const model = result.line_item.includes(', ') ? result.line_item.slice(0, result.line_item.lastIndexOf(', ')) : result.line_item;
          records.push({ day, model, tokens: null, costUsd: new Decimal(String(amount.value)) });
        } else {
          throw new UsageExportError(`${at}: unsupported result object ${JSON.stringify(result.object)} (completions usage and costs are supported)`);
        }
      }
    });
  });
  return records;
}
