import { invalidRequest } from '../../canonical/index.js';

/**
 * Field readers shared by the OpenAI-family request parsers (chat completions and Responses): one wording
 * for each refusal, so both formats name a bad field the same way.
 */
export type Json = Record<string, unknown>;

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A value that asks for nothing: absent, one of the key's neutral values, or an empty list or object. */
export function isNeutralValue(neutral: ReadonlyMap<string, readonly unknown[]>, key: string, value: unknown): boolean {
  if (value === null || value === undefined) return true;
  if (neutral.get(key)?.includes(value)) return true;
  if (Array.isArray(value)) return value.length === 0;
  return isObject(value) && Object.keys(value).length === 0;
}

/** OpenAI's metadata rule: at most 16 string pairs, keys ≤ 64 and values ≤ 512 characters. */
export function parseMetadata(value: unknown): Record<string, string> | null {
  if (value === undefined || value === null) return null;
  if (!isObject(value) || Object.keys(value).length > 16) throw invalidRequest("'metadata' must be an object with at most 16 keys.", 'metadata');
  for (const [key, item] of Object.entries(value)) {
    if (typeof item !== 'string' || key.length > 64 || item.length > 512) {
      throw invalidRequest("'metadata' values must be strings (keys ≤ 64, values ≤ 512 characters).", `metadata.${key}`);
    }
  }
  return value as Record<string, string>;
}

export function optionalBoolean(source: Json, key: string, param = key): boolean | null {
  const value = source[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'boolean') throw invalidRequest(`'${param}' must be a boolean.`, param);
  return value;
}

export function optionalString(source: Json, key: string): string | null {
  const value = source[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw invalidRequest(`'${key}' must be a string.`, key);
  return value;
}

export function optionalNumber(source: Json, key: string, min: number, max: number): number | null {
  const value = source[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw invalidRequest(`'${key}' must be a number from ${min} to ${max}.`, key);
  }
  return value;
}

export function optionalInteger(source: Json, key: string, min: number, max = Number.MAX_SAFE_INTEGER): number | null {
  const value = source[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalidRequest(`'${key}' must be an integer${min > Number.MIN_SAFE_INTEGER ? ` ≥ ${min}` : ''}${max < Number.MAX_SAFE_INTEGER ? ` and ≤ ${max}` : ''}.`, key);
  }
  return value;
}
