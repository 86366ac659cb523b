import type { AppliedContentPolicy, ContentPolicyDefinition } from '../../events/index.js';
import { type CompileOptions, type CompiledContentPolicy, compilePolicy } from './compiled-policy.js';

/**
 * Compiled policies by the versions in force: compiling builds detectors and regexes (a deny list of thousands of
 * terms is one large alternation), which a request must not pay each time. A policy version never changes, so an
 * entry never goes stale; the least recently used one goes when the cache is full.
 */
export class CompiledPolicyCache {
  private readonly entries = new Map<string, CompiledContentPolicy>();

  constructor(private readonly capacity = 256, private readonly options: CompileOptions = {}) {}

  /** The compiled form of `applied`; `definitions` is called only on a miss, with the definitions of its sources in order. */
  get(applied: AppliedContentPolicy, definitions: () => readonly ContentPolicyDefinition[]): CompiledContentPolicy {
    const key = appliedPolicyKey(applied);
    const known = this.entries.get(key);
    if (known) {
      this.entries.delete(key);
      this.entries.set(key, known);
      return known;
    }
    const compiled = compilePolicy(definitions(), this.options);
    this.entries.set(key, compiled);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
    return compiled;
  }

  get size(): number {
    return this.entries.size;
  }
}

/** What identifies the policies in force: each source's id and version (where it was attached does not change the rules). */
export function appliedPolicyKey(applied: AppliedContentPolicy): string {
  return applied.sources.map((source) => `${source.policyId}@${source.version}`).sort().join(',');
}
