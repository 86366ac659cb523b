import type { ModerationCheck, RemoteCheckDirection } from '../../events/index.js';

/** How long a request waits for its moderation call by default, and at most (retries included): the request waits with it. */
export const MODERATION_CHECK_TIMEOUT = Object.freeze({ defaultMs: 5_000, maxMs: 30_000 });

/** The provider types whose adapter speaks OpenAI's `POST /v1/moderations`: a moderation alias must reach one of them. */
export const MODERATION_PROVIDER_TYPES: readonly string[] = ['openai', 'azure-openai', 'openai-compatible', 'mock'];

const MODERATION_FIELDS = ['alias', 'directions', 'failOpen', 'categories', 'timeoutMs'];
const DIRECTIONS: readonly RemoteCheckDirection[] = ['input', 'output'];
/** OpenAI's category names are lower-case words joined by `-` and `/` (`self-harm/intent`); anything else can never match. */
const CATEGORY = /^[a-z][a-z-]*(\/[a-z][a-z-]*)?$/;

/**
 * Everything wrong with a policy's `moderation` as declared, each problem prefixed with its path. Whether the alias
 * exists and reaches a moderation deployment needs the running catalog: the publication guard checks that.
 */
export function moderationCheckProblems(value: unknown, path: string): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [`${path}: must be a mapping { alias, directions?, failOpen?, categories?, timeoutMs? }`];
  const moderation = value as Record<string, unknown>;
  const problems: string[] = [];
  for (const key of Object.keys(moderation)) if (!MODERATION_FIELDS.includes(key)) problems.push(`${path}.${key}: unknown field (expected one of ${MODERATION_FIELDS.join(', ')})`);
  if (typeof moderation.alias !== 'string' || moderation.alias.length === 0 || moderation.alias.length > 128) problems.push(`${path}.alias: must be the name of one of the gateway's aliases`);
  if (moderation.failOpen !== undefined && typeof moderation.failOpen !== 'boolean') problems.push(`${path}.failOpen: must be true or false`);
  const timeout = moderation.timeoutMs;
  if (timeout !== undefined && (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 1 || timeout > MODERATION_CHECK_TIMEOUT.maxMs)) {
    problems.push(`${path}.timeoutMs: must be an integer from 1 to ${MODERATION_CHECK_TIMEOUT.maxMs} (milliseconds)`);
  }
  const directions = moderation.directions;
  if (directions !== undefined) {
    if (!Array.isArray(directions) || directions.length === 0 || directions.some((d) => !DIRECTIONS.includes(d as RemoteCheckDirection))) {
      problems.push(`${path}.directions: must be a non-empty list of ${DIRECTIONS.join(', ')}`);
    } else if (new Set(directions).size !== directions.length) problems.push(`${path}.directions: a direction is listed twice`);
  }
  const categories = moderation.categories;
  if (categories !== undefined) {
    if (!Array.isArray(categories) || categories.length === 0 || categories.some((c) => typeof c !== 'string' || !CATEGORY.test(c))) {
      problems.push(`${path}.categories: must be a non-empty list of moderation category names (such as violence, self-harm/intent)`);
    } else if (new Set(categories).size !== categories.length) problems.push(`${path}.categories: a category is listed twice`);
  }
  return problems;
}

/** A valid `moderation` with its defaults filled, its directions in a stable order and its categories sorted. */
export function normalizeModerationCheck(moderation: Record<string, unknown>): ModerationCheck {
  const directions = (moderation.directions as RemoteCheckDirection[] | undefined) ?? ['input'];
  const categories = moderation.categories as string[] | undefined;
  return {
    alias: moderation.alias as string,
    directions: DIRECTIONS.filter((direction) => directions.includes(direction)),
    failOpen: (moderation.failOpen as boolean | undefined) ?? false,
    ...(categories ? { categories: [...categories].sort() } : {}),
    timeoutMs: (moderation.timeoutMs as number | undefined) ?? MODERATION_CHECK_TIMEOUT.defaultMs,
  };
}
