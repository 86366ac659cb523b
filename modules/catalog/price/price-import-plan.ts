import { Decimal } from 'decimal.js';
import { type DeploymentState, type PriceState, type PriceTable, type ProviderState, type ProviderType, priceAt } from '../../../events/index.js';
import { assertExactPrices, type PriceMap, type PriceMapEntry } from './litellm-price-map.js';

/**
 * The `litellm_provider` values whose entries price a provider type, best first. `openai-compatible` (any
 * server speaking OpenAI's API) and `mock` accept an entry of any provider. An entry without
 * `litellm_provider` matches every type, after the type's own providers.
 */
export const LITELLM_PROVIDERS: Record<ProviderType, readonly string[] | 'any'> = {
  openai: ['openai', 'text-completion-openai'],
  'azure-openai': ['azure', 'azure_text'],
  anthropic: ['anthropic'],
  gemini: ['gemini'],
  bedrock: ['bedrock', 'bedrock_converse'],
  'openai-compatible': 'any',
  mock: 'any',
};

/** What the import does for one deployment. */
export type DeploymentPriceChange =
  | { outcome: 'schedule'; entry: string; current: PriceTable | null; proposed: PriceTable }
  | { outcome: 'unchanged'; entry: string; current: PriceTable }
  | { outcome: 'no-entry'; current: PriceTable | null }
  | { outcome: 'ambiguous'; entries: string[]; current: PriceTable | null };

export type DeploymentPriceImport = DeploymentPriceChange & {
  deployment: string;
  model: string;
  provider: string;
  providerType: ProviderType;
};

export interface PriceImportPlan {
  effectiveFrom: Date;
  /** Every deployment that is not retired, in id order. */
  deployments: DeploymentPriceImport[];
  /** Priced entries of the map that match no deployment (counted; listed only on request). */
  unmatchedEntries: string[];
  /** Entries without a price per input and output token (images, audio, …): nothing to import. */
  unpricedEntries: string[];
}

export interface CatalogPrices {
  readonly providers: ReadonlyMap<string, ProviderState>;
  readonly deployments: ReadonlyMap<string, DeploymentState>;
  readonly prices: ReadonlyMap<string, PriceState>;
}

/**
 * Matches each deployment to the map by its `model` and its provider's type, and compares the entry's
 * prices with the price that would be in effect at `effectiveFrom`. Fields the entry does not give
 * (cache reads, cache writes, reasoning) keep the deployment's current value. Nothing is ever removed: a
 * deployment without an entry, or with several entries of different prices at the same rank, keeps what
 * it has.
 */
export function planPriceImport(map: PriceMap, catalog: CatalogPrices, effectiveFrom: Date): PriceImportPlan {
  const used = new Set<string>();
  const deployments: DeploymentPriceImport[] = [];
  for (const [id, deployment] of [...catalog.deployments].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (deployment.status === 'absent' || deployment.status === 'retired') continue;
    const provider = catalog.providers.get(deployment.settings.providerId);
    if (!provider || provider.status === 'absent') continue;
    const type = provider.settings.type;
    const current = priceAt(catalog.prices.get(id) ?? { schedule: [] }, effectiveFrom)?.table ?? null;
    const candidates = bestCandidates(map.entries, deployment.settings.model, type);
    for (const candidate of candidates) used.add(candidate.key);
    const described = { deployment: id, model: deployment.settings.model, provider: deployment.settings.providerId, providerType: type };
    const distinct = candidates.filter((candidate, i) => candidates.findIndex((other) => samePrices(other.prices, candidate.prices)) === i);
    if (candidates.length === 0) {
      deployments.push({ ...described, outcome: 'no-entry', current });
    } else if (distinct.length > 1) {
      deployments.push({ ...described, outcome: 'ambiguous', entries: candidates.map((c) => c.key), current });
    } else {
      const entry = candidates[0];
      assertExactPrices(entry);
      const proposed = tableOf(entry, current);
      deployments.push(current && sameTable(current, proposed)
        ? { ...described, outcome: 'unchanged', entry: entry.key, current }
        : { ...described, outcome: 'schedule', entry: entry.key, current, proposed });
    }
  }
  return {
    effectiveFrom,
    deployments,
    unmatchedEntries: map.entries.filter((entry) => !used.has(entry.key)).map((entry) => entry.key),
    unpricedEntries: map.unpriced,
  };
}

/**
 * The entries naming the model, of the best rank: the provider type's own `litellm_provider` values in
 * their order (any provider, all alike, for `openai-compatible` and `mock`), then entries that name no
 * provider. A key names the model as it is (`gpt-4o`) or after its provider's prefix (`azure/gpt-4o`).
 */
function bestCandidates(entries: readonly PriceMapEntry[], model: string, type: ProviderType): PriceMapEntry[] {
  const accepted = LITELLM_PROVIDERS[type];
  const ranked: Array<{ entry: PriceMapEntry; rank: number }> = [];
  for (const entry of entries) {
    if (entry.key !== model && modelOfKey(entry) !== model) continue;
    if (entry.provider === null) ranked.push({ entry, rank: Number.MAX_SAFE_INTEGER });
    else if (accepted === 'any') ranked.push({ entry, rank: 0 });
    else if (accepted.includes(entry.provider)) ranked.push({ entry, rank: accepted.indexOf(entry.provider) });
  }
  const best = Math.min(...ranked.map((r) => r.rank));
  return ranked.filter((r) => r.rank === best).map((r) => r.entry);
}

/** `azure/gpt-4o` (provider azure) → `gpt-4o`; `vertex_ai/gemini-1.5-pro` (provider vertex_ai-…) → `gemini-1.5-pro`. */
function modelOfKey(entry: PriceMapEntry): string | null {
  const slash = entry.key.indexOf('/');
  if (slash < 0 || entry.provider === null) return null;
  return entry.provider.startsWith(entry.key.slice(0, slash)) ? entry.key.slice(slash + 1) : null;
}

function tableOf(entry: PriceMapEntry, current: PriceTable | null): PriceTable {
  const keep = <Field extends 'cachedInputPer1M' | 'cacheWritePer1M' | 'reasoningPer1M'>(field: Field) => entry.prices[field] ?? current?.[field] ?? null;
  return {
    inputPer1M: entry.prices.inputPer1M!,
    outputPer1M: entry.prices.outputPer1M!,
    cachedInputPer1M: keep('cachedInputPer1M'),
    cacheWritePer1M: keep('cacheWritePer1M'),
    reasoningPer1M: keep('reasoningPer1M'),
    currency: 'USD',
  };
}

const FIELDS = ['inputPer1M', 'outputPer1M', 'cachedInputPer1M', 'cacheWritePer1M', 'reasoningPer1M'] as const;

function equalAmount(a: string | null | undefined, b: string | null | undefined): boolean {
  return a === null || a === undefined || b === null || b === undefined ? (a ?? null) === (b ?? null) : new Decimal(a).eq(b);
}

function sameTable(a: PriceTable, b: PriceTable): boolean {
  return FIELDS.every((field) => equalAmount(a[field], b[field]));
}

function samePrices(a: PriceMapEntry['prices'], b: PriceMapEntry['prices']): boolean {
  return FIELDS.every((field) => equalAmount(a[field], b[field]));
}
