import type { ContentPolicyDefinition } from '../../events/index.js';
import type { ControlPlaneState } from '../control-plane/index.js';
import { type AttachedPolicy, combineContentPolicies, type EffectiveContentPolicy } from './effective-content-policy.js';

interface PolicyVersion {
  policyId: string;
  version: number;
  definition: ContentPolicyDefinition;
}

/** Combinations remembered per snapshot: enough for every (tenant, key, alias) a node sees between two changes. */
const MEMO_LIMIT = 10_000;

/**
 * The content policies of one routing snapshot: each policy's current version and which tenant, key and
 * alias it is attached to. Immutable like the snapshot (its memo only remembers answers): a change builds
 * a new index, so a request that captured the snapshot keeps the policy version it was admitted with.
 */
export class ContentPolicyIndex {
  private readonly memo = new Map<string, EffectiveContentPolicy | null>();

  constructor(
    private readonly tenants: ReadonlyMap<string, PolicyVersion>,
    private readonly keys: ReadonlyMap<string, PolicyVersion>,
    private readonly aliases: ReadonlyMap<string, PolicyVersion>,
    /** Attachments that name no policy this node knows (never defined): reported, and nothing is applied for them. */
    readonly problems: readonly string[],
  ) {}

  static readonly EMPTY = new ContentPolicyIndex(new Map(), new Map(), new Map(), []);

  /**
   * Attachments from the control-plane state. A retired policy still attached (a retirement racing an
   * attachment; the publication guard refuses the rest) keeps applying its last version: a protection
   * never lapses silently.
   */
  static of(state: ControlPlaneState): ContentPolicyIndex {
    const problems: string[] = [];
    const resolve = (policyId: string | undefined, owner: string): PolicyVersion | null => {
      if (policyId === undefined) return null;
      const policy = state.contentPolicies.get(policyId);
      if (!policy || policy.status === 'absent') {
        problems.push(`${owner}: content policy ${policyId} does not exist; nothing is applied for it`);
        return null;
      }
      return { policyId, version: policy.version, definition: policy.definition };
    };
    const attach = <T>(entries: Iterable<[string, T]>, policyOf: (value: T) => string | undefined, owner: (id: string) => string) => {
      const map = new Map<string, PolicyVersion>();
      for (const [id, value] of entries) {
        const resolved = resolve(policyOf(value), owner(id));
        if (resolved) map.set(id, resolved);
      }
      return map;
    };
    const tenants = attach(state.tenants, (t) => (t.status === 'absent' ? undefined : t.contentPolicy), (id) => `tenant ${id}`);
    const keys = attach(state.keys, (k) => (k.status === 'active' ? k.grant.contentPolicy : undefined), (id) => `key ${id}`);
    const aliases = attach(state.aliases, (a) => (a.status === 'published' ? a.definition.policy.contentPolicy : undefined), (id) => `alias ${id}`);
    if (tenants.size + keys.size + aliases.size === 0 && problems.length === 0) return ContentPolicyIndex.EMPTY;
    return new ContentPolicyIndex(tenants, keys, aliases, problems);
  }

  /** The policy in force for a request of `keyId` (of `tenantId`) on `alias`; null, at the cost of three lookups, when none is attached. */
  contentPolicyFor(tenantId: string, keyId: string, alias: string): EffectiveContentPolicy | null {
    const tenant = this.tenants.get(tenantId);
    const key = this.keys.get(keyId);
    const routed = this.aliases.get(alias);
    if (tenant === undefined && key === undefined && routed === undefined) return null;
    const memoKey = `${tenantId}\u0000${keyId}\u0000${alias}`;
    const known = this.memo.get(memoKey);
    if (known !== undefined) return known;
    const attached: AttachedPolicy[] = [];
    if (tenant) attached.push(attachedAs(tenant, 'tenant'));
    if (key) attached.push(attachedAs(key, 'key'));
    if (routed) attached.push(attachedAs(routed, 'alias'));
    const effective = combineContentPolicies(attached);
    if (this.memo.size < MEMO_LIMIT) this.memo.set(memoKey, effective);
    return effective;
  }
}

function attachedAs(policy: PolicyVersion, attachedTo: AttachedPolicy['attachedTo']): AttachedPolicy {
  return { policyId: policy.policyId, version: policy.version, attachedTo, definition: policy.definition };
}
