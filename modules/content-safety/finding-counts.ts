import type { ContentAction } from '../../events/index.js';
import type { ContentDirection, FindingType } from './finding.js';

/** One line of a transformation manifest: how many findings of a type, in a direction, got an action. */
export interface FindingCount {
  type: FindingType;
  direction: ContentDirection;
  action: ContentAction;
  count: number;
}

/** Counts of findings per (type, direction, action): what a manifest and the metrics record — never a value. */
export class FindingCounts {
  private readonly counts = new Map<string, FindingCount>();

  add(type: FindingType, direction: ContentDirection, action: ContentAction, count = 1): void {
    const key = `${type}\u0000${direction}\u0000${action}`;
    const known = this.counts.get(key);
    if (known) known.count += count;
    else this.counts.set(key, { type, direction, action, count });
  }

  /** Adds every count of another tally (one request's channels into its manifest). */
  merge(other: FindingCounts): void {
    for (const line of other.lines()) this.add(line.type, line.direction, line.action, line.count);
  }

  /** In a stable order (type, direction, action), for manifests whose digests must not depend on detector order. */
  lines(): FindingCount[] {
    return [...this.counts.values()].map((line) => ({ ...line })).sort((a, b) =>
      a.type.localeCompare(b.type) || a.direction.localeCompare(b.direction) || a.action.localeCompare(b.action));
  }

  get total(): number {
    let total = 0;
    for (const line of this.counts.values()) total += line.count;
    return total;
  }
}
