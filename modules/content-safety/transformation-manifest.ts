import type { AppliedContentPolicy } from '../../events/index.js';
import type { CompiledContentPolicy } from './compiled-policy.js';
import type { FindingCount, FindingCounts } from './finding-counts.js';

/**
 * The evidence of what content safety did to a request, without content: which policies (ids, versions), which
 * detectors (versions), how many findings per type, direction and action, digests of the transformed texts, and how
 * many placeholders came back. Never a matched value, never a mapping.
 */
export interface TransformationManifest {
  policies: AppliedContentPolicy['sources'];
  detectorVersions: Record<string, string>;
  counts: FindingCount[];
  /** sha256 (contentDigest) of the transformed input and output texts, when the caller took them. */
  digests: { input?: string; output?: string };
  placeholders: { resolved: number; unresolved: number };
}

export function transformationManifest(
  applied: AppliedContentPolicy,
  compiled: CompiledContentPolicy,
  counts: FindingCounts,
  extra: { digests?: TransformationManifest['digests']; resolved?: number; unresolved?: number } = {},
): TransformationManifest {
  return {
    policies: applied.sources.map((source) => ({ ...source })),
    detectorVersions: { ...compiled.detectorVersions },
    counts: counts.lines(),
    digests: { ...extra.digests },
    placeholders: { resolved: extra.resolved ?? 0, unresolved: extra.unresolved ?? 0 },
  };
}
