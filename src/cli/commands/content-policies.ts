import { type ContentPolicyView, contentPolicyView } from '../../../modules/access/content-policy/content-policy-view.js';
import { readEnvironment } from '../../config/environment.js';
import { openPlatform } from '../../platform.js';
import { writeOut } from '../output.js';
import { runningServer } from '../running-server.js';
import { controlPlaneOf } from './config-export.js';

/**
 * `switchyard content-policies list|show`: the policies with their versions and attachments, through the
 * running server's admin API when one holds the embedded store, else folded from the log directly.
 * Changes go through the configuration file (`apply -f`, with `--dry-run` for the plan) or the admin API.
 */
export async function contentPoliciesList(options: { all: boolean; json: boolean }): Promise<number> {
  const policies = await read(null, options.all);
  if (options.json) {
    await writeOut(`${JSON.stringify(policies, null, 2)}\n`);
    return 0;
  }
  if (policies.length === 0) {
    process.stderr.write(`No ${options.all ? '' : 'live '}content policies.\n`);
    return 0;
  }
  await writeOut(policies.map((p) => `${p.id}\tv${p.version}\t${p.status}\t${p.attachedTo.length ? `attached to ${p.attachedTo.join(', ')}` : 'not attached'}\n`).join(''));
  return 0;
}

export async function contentPoliciesShow(id: string): Promise<number> {
  const [policy] = await read(id, true);
  if (!policy) {
    process.stderr.write(`switchyard content-policies show: content policy ${id} does not exist\n`);
    return 1;
  }
  await writeOut(`${JSON.stringify(policy, null, 2)}\n`);
  return 0;
}

async function read(id: string | null, all: boolean): Promise<ContentPolicyView[]> {
  const environment = readEnvironment();
  const server = runningServer(environment);
  if (server) {
    if (id !== null) {
      try {
        return [await server.get<ContentPolicyView>(`/admin/v1/content-policies/${encodeURIComponent(id)}`)];
      } catch (error) {
        if (/content_policy_not_found|does not exist/.test((error as Error).message)) return [];
        throw error;
      }
    }
    const views: ContentPolicyView[] = [];
    for (let after: string | null = null; ;) {
      const query: string = `?status=${all ? 'all' : 'live'}&limit=1000${after ? `&after=${encodeURIComponent(after)}` : ''}`;
      const page: { data: ContentPolicyView[]; next: string | null } = await server.get(`/admin/v1/content-policies${query}`);
      views.push(...page.data);
      if (page.next === null) return views;
      after = page.next;
    }
  }
  const platform = await openPlatform(environment, { runDurable: false });
  try {
    const state = await controlPlaneOf(platform.store);
    return [...state.contentPolicies.entries()]
      .filter(([policyId, policy]) => policy.status !== 'absent' && (id === null || policyId === id) && (all || policy.status === 'live'))
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([policyId, policy]) => contentPolicyView(state, policyId, policy as Exclude<typeof policy, { status: 'absent' }>));
  } finally {
    await platform.close();
  }
}
