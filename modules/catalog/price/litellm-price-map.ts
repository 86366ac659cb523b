import { Decimal } from 'decimal.js';
import type { PriceTable } from '../../../events/index.js';

/** Enough digits that shifting a per-token cost by six places never rounds (decimal.js defaults to 20). */
const Exact = Decimal.clone({ precision: 60, toExpNeg: -100, toExpPos: 100 });

/** The price table allows 9 decimal places per million tokens: a per-token cost down to 1e-15 USD. */
const MAX_PLACES = 9;

/** The map's per-token cost fields, and the price-table field each becomes (per one million tokens). */
export const PRICE_MAP_FIELDS = {
  input_cost_per_token: 'inputPer1M',
  output_cost_per_token: 'outputPer1M',
  cache_read_input_token_cost: 'cachedInputPer1M',
  cache_creation_input_token_cost: 'cacheWritePer1M',
  output_cost_per_reasoning_token: 'reasoningPer1M',
} as const satisfies Record<string, keyof PriceTable>;

type PriceMapField = keyof typeof PRICE_MAP_FIELDS;

/** One priced entry of the map, its costs already per one million tokens as exact decimal strings. */
export interface PriceMapEntry {
  /** The map's key, e.g. `gpt-4o-mini`, `azure/gpt-4o`, `anthropic.claude-3-haiku-20240307-v1:0`. */
  key: string;
  /** `litellm_provider`, when the entry names one. */
  provider: string | null;
  mode: string | null;
  /** Only the fields the entry gives. */
  prices: Partial<Record<(typeof PRICE_MAP_FIELDS)[PriceMapField], string>>;
}

export interface PriceMap {
  /** Entries with both an input and an output cost per token. */
  entries: PriceMapEntry[];
  /** Keys of entries priced otherwise (per image, per second, per character) or not at all: nothing to import. */
  unpriced: string[];
}

/** A map that cannot be imported as it is; nothing is changed. `entry` and `field` say where. */
export class PriceMapError extends Error {
  override readonly name = 'PriceMapError';
  constructor(readonly entry: string | null, readonly field: string | null, message: string) {
    super(message);
  }
}

/** The map's documentation entry, which describes the fields rather than pricing a model. */
const SAMPLE_SPEC = 'sample_spec';

/**
 * Reads a LiteLLM model price map (`model_prices_and_context_window.json`: model name → costs per token in
 * USD, `litellm_provider`, `mode`, token limits, capabilities). Costs may be JSON numbers or decimal strings;
 * callers that read the file themselves pass each number as its source text (see `exactJson`), so that no
 * cost goes through a binary float. Every cost field of every entry is checked before anything is used:
 * one negative or non-numeric cost refuses the whole map.
 */
export function readPriceMap(map: unknown): PriceMap {
  if (typeof map !== 'object' || map === null || Array.isArray(map)) {
    throw new PriceMapError(null, null, 'The price map must be a JSON object of model name → prices (LiteLLM\'s model_prices_and_context_window.json).');
  }
  const entries: PriceMapEntry[] = [];
  const unpriced: string[] = [];
  for (const [key, value] of Object.entries(map as Record<string, unknown>)) {
    if (key === SAMPLE_SPEC) continue;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new PriceMapError(key, null, `Entry "${key}" is not an object.`);
    const fields = value as Record<string, unknown>;
    const provider = optionalText(key, 'litellm_provider', fields.litellm_provider);
    const mode = optionalText(key, 'mode', fields.mode);
    const prices: PriceMapEntry['prices'] = {};
    for (const [field, target] of Object.entries(PRICE_MAP_FIELDS) as Array<[PriceMapField, (typeof PRICE_MAP_FIELDS)[PriceMapField]]>) {
      if (fields[field] === undefined || fields[field] === null) continue;
      prices[target] = perMillion(key, field, fields[field]);
    }
    if (prices.inputPer1M === undefined || prices.outputPer1M === undefined) unpriced.push(key);
    else entries.push({ key, provider, mode, prices });
  }
  return { entries, unpriced };
}

/**
 * A cost per token as the exact decimal price per one million tokens: `1.5e-07` → `"0.15"`. Exponent
 * notation is read as decimal text, so `3e-06` is exactly `"3"`, never `2.9999999999999996`.
 */
export function perMillion(entry: string, field: string, value: unknown): string {
  const where = `Entry "${entry}" field ${field}`;
  if (typeof value !== 'number' && typeof value !== 'string') throw new PriceMapError(entry, field, `${where}: ${JSON.stringify(value)} is not a number.`);
  const text = String(value).trim();
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) throw new PriceMapError(entry, field, `${where}: ${JSON.stringify(value)} is not a number.`);
  const cost = new Exact(text);
  if (cost.isNegative() && !cost.isZero()) throw new PriceMapError(entry, field, `${where}: ${text} is negative.`);
  return cost.abs().times(1_000_000).toFixed();
}

/**
 * Refuses an entry that is to price a deployment with an amount the price table cannot hold exactly
 * (more than 9 decimal places per million tokens): money is never rounded. Only entries in use are
 * checked, so an odd entry for a model nobody deploys does not block an import.
 */
export function assertExactPrices(entry: PriceMapEntry): void {
  for (const [field, target] of Object.entries(PRICE_MAP_FIELDS)) {
    const amount = entry.prices[target];
    if (amount !== undefined && new Exact(amount).decimalPlaces() > MAX_PLACES) {
      throw new PriceMapError(entry.key, field, `Entry "${entry.key}" field ${field}: ${amount} per million tokens has more than ${MAX_PLACES} decimal places; the gateway keeps prices exact, never rounded.`);
    }
  }
}

function optionalText(entry: string, field: string, value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw new PriceMapError(entry, field, `Entry "${entry}" field ${field}: ${JSON.stringify(value)} is not a string.`);
  return value;
}
