import { createHash } from 'node:crypto';
import { canonicalJson } from '../../src/kernel/index.js';
import type { ChatRequest } from '../canonical/index.js';
import type { StoredAnswer } from './stored-answer.js';

/**
 * Where a cached answer lives: the tenant's partition, the alias, and a digest of the alias version and
 * the normalized request. Tenants never share entries because the tenant is part of every key.
 */
export interface CacheEntryKey {
  tenantId: string;
  alias: string;
  digest: string;
}

/** Which entries a purge removes; every member is optional and they combine with AND. */
export interface CachePurge {
  tenantId: string | null;
  alias: string | null;
  /** Only entries stored before this instant (ms since the epoch). */
  storedBefore: number | null;
}

/** The exact cache's store: Redis (shared by every node) or this process's byte-bounded LRU. */
export interface ExactCache {
  get(key: CacheEntryKey): Promise<StoredAnswer | null>;
  /** Stores for `ttlMs`; an answer above the entry size limit is not stored. */
  put(key: CacheEntryKey, answer: StoredAnswer, ttlMs: number): Promise<void>;
  /** Removes the entries the filter selects; returns how many. */
  purge(filter: CachePurge): Promise<number>;
}

/**
 * The digest of an exact-cache key: the alias version (a new version never serves the old one's
 * answers) and the canonical request serialized with sorted keys, without `stream` and the usage-frame
 * flag — they change how an answer is framed, not what it says, so a buffered answer serves a stream
 * and vice versa.
 */
export function exactCacheDigest(aliasVersion: number, request: ChatRequest, contentPolicies?: readonly string[]): string {
  const { stream: _stream, includeUsage: _includeUsage, ...content } = request;
  // Without a content policy the digest is what it always was (entries kept before policies existed still hit).
  const keyed = contentPolicies ? { aliasVersion, request: content, contentPolicies } : { aliasVersion, request: content };
  return createHash('sha256').update(canonicalJson(keyed)).digest('hex');
}
