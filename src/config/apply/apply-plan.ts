import { Decimal } from 'decimal.js';
import type { AliasDefinition } from '../../../events/alias-state.js';
import type { KeyGrant } from '../../../events/api-key-state.js';
import type { DeploymentSettings } from '../../../events/deployment-events.js';
import type { ProviderSettings } from '../../../events/provider-events.js';
import { NO_LIMITS } from '../../../events/tenant-state.js';
import type { TenantBudget, TenantLimits } from '../../../events/tenant-events.js';
import type { ApiKeyCommand } from '../../../modules/access/api-key/api-key.decider.js';
import { displayPrefix, hashApiKey } from '../../../modules/access/api-key/key-format.js';
import type { TenantCommand } from '../../../modules/access/tenant/tenant.decider.js';
import type { DeploymentCommand } from '../../../modules/catalog/deployment/deployment.decider.js';
import type { PriceCommand } from '../../../modules/catalog/price/price.decider.js';
import { type ProviderCommand, providerSettingsProblem } from '../../../modules/catalog/provider/provider.decider.js';
import type { AliasCommand } from '../../../modules/catalog/alias/alias.decider.js';
import type { ContentPolicyCommand } from '../../../modules/access/content-policy/content-policy.decider.js';
import { contentPolicySetupProblem, contentPolicyWebhookProblem } from '../../../modules/access/content-policy/content-policy-settings.js';
import { moderationAliasProblem } from '../../../modules/access/content-policy/content-policy-guard.js';
import { MODERATION_PROVIDER_TYPES } from '../../../modules/content-safety/index.js';
import type { ContentPolicyDefinition } from '../../../events/content-policy-events.js';
import type { ControlPlaneState } from '../../../projections/control-plane/index.js';
import { resolveSecret } from '../../kernel/secret-references/secret-reference.js';
import type { GatewayConfig } from '../gateway-config.js';
import { changedFields, type DefinitionFields, definitionOf, fieldsOf, sameField } from './definition-fields.js';
import { type DefinitionFamily, definitionFields, type FieldHistory, type FieldWriter, isConfigurationActor } from './field-provenance.js';

/** One field a step changes: its dotted path in the definition, the running value and the one it becomes. */
export interface FieldChange {
  field: string;
  from: unknown;
  to: unknown;
  /** With --overwrite-runtime-edits: the runtime edit this change undoes. */
  overwrites?: FieldWriter;
}

interface StepBase {
  summary: string;
  /** The YAML path of the definition (`aliases[0]`). */
  path: string;
  /** What the step changes, field by field (every field of a new definition). */
  changes: FieldChange[];
  /** The step makes a definition that did not exist (its changes are all of the file's fields). */
  creates?: true;
}

export type PlannedStep =
  | (StepBase & { family: 'provider'; command: ProviderCommand })
  | (StepBase & { family: 'deployment'; command: DeploymentCommand })
  | (StepBase & { family: 'price'; command: PriceCommand })
  | (StepBase & { family: 'alias'; command: AliasCommand })
  | (StepBase & { family: 'tenant'; command: TenantCommand })
  | (StepBase & { family: 'apikey'; command: ApiKeyCommand })
  | (StepBase & { family: 'content-policy'; command: ContentPolicyCommand });

/**
 * A field of a definition the file declares whose running value differs from the file's and was last set
 * at runtime (through the admin API or the CLI): apply keeps the running value and says so.
 */
export interface Drift {
  /** The YAML path of the definition (`aliases[0]`). */
  path: string;
  /** `alias chat`, `tenant acme`, … */
  definition: string;
  /** The field's dotted path in the definition (`policy.maxAttempts`; `status` for lifecycle). */
  field: string;
  file: unknown;
  running: unknown;
  /** The actor and time of the event that set the running value (null when the log does not say). */
  changedBy: string | null;
  changedAt: Date | null;
  /** What the operator can do about it. */
  resolution: string;
  /** The whole finding as one line: what the CLI prints and the start-up log writes. */
  message: string;
}

/**
 * A field of a definition the file declares whose running value the file says too, last set at runtime:
 * applying records that the file adopted it (ConfigurationAdopted), and the file owns the field again.
 */
export interface Adoption {
  /** The YAML path of the definition (`aliases[0]`). */
  path: string;
  /** `alias chat`, `tenant acme`, … */
  definition: string;
  family: DefinitionFamily;
  id: string;
  /** The field's dotted path as drift and changes show it (`policy.maxAttempts`, `price.inputPer1M`). */
  field: string;
  /** The field as ownership tracks it on the definition's stream (`v2.inputPer1M` for a price version): what the event names. */
  tracked: string;
  /** The value the file and the running state agree on (what the log holds: references and hashes, never a secret). */
  value: unknown;
  /** The runtime edit adopted. */
  adopts: FieldWriter;
  /** The finding as one line, without the verb (the CLI and the start-up log say "would adopt" or "adopted"). */
  message: string;
}

export interface ApplyPlan {
  steps: PlannedStep[];
  /** Differences that no command can reconcile; the plan is refused while there are any. */
  problems: string[];
  /** Runtime edits the file does not match, kept as they are (none are reported for what --overwrite-runtime-edits reverts). */
  drift: Drift[];
  /** Runtime edits the file now says too: the file adopts them (one ConfigurationAdopted for the whole apply). */
  adoptions: Adoption[];
}

export interface PlanOptions {
  now: Date;
  /** Retire, remove, revoke or suspend what the file no longer declares. */
  prune: boolean;
  /** Apply the file's value over runtime edits of settings too (lifecycle stays as it is). */
  overwriteRuntimeEdits?: boolean;
  /** The environment a content policy's set-up is checked against (SWITCHYARD_PII_KEY for session scope); process.env when absent. */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * Which event last changed each field of a definition (field-provenance.ts); asked for every existing
   * definition the file declares (a field that agrees with the file may be a runtime edit to adopt).
   * Without it every field counts as the configuration's own.
   */
  history?: (family: DefinitionFamily, id: string) => FieldHistory;
}

const NO_HISTORY: FieldHistory = new Map();

const KEEP_OR_OVERWRITE = 'kept; keep it for good with `switchyard config export`, or apply the file over it with `switchyard apply --overwrite-runtime-edits`';

/**
 * The diff of a configuration file against the projections: only the commands whose events would
 * change something. Order respects references: providers, deployments, prices, content policies, tenants,
 * aliases, keys; pruning runs the other way round.
 *
 * Ownership: what the file declares, the file owns, field by field: a field whose running value the file
 * itself set last (an event of a `config:` actor), or of a definition that does not exist yet, follows the
 * file. A field whose running value was last set by anyone else (an admin API or CLI edit) is kept and
 * reported as drift, unless `overwriteRuntimeEdits`. For lifecycle the running system always wins: the
 * file never revives a revoked key, reinstates a tenant or enables a deployment that was stopped at
 * runtime (it may still stop things itself: `disabled: true`, `--prune`).
 */
export function planApply(config: GatewayConfig, state: ControlPlaneState, options: PlanOptions): ApplyPlan {
  const steps: PlannedStep[] = [];
  const problems: string[] = [];
  const drift: Drift[] = [];
  const adoptions: Adoption[] = [];
  const history = (family: DefinitionFamily, id: string) => options.history?.(family, id) ?? NO_HISTORY;
  const overwrite = options.overwriteRuntimeEdits === true;

  /**
   * The file's fields over the running ones: each differing field takes the file's value unless a runtime
   * edit set the running one (then it is kept and reported). `exists`: false for a definition to be created.
   */
  const reconcile = (family: DefinitionFamily, id: string, path: string, definition: string, desired: DefinitionFields, running: DefinitionFields, exists: boolean) => {
    const differing = changedFields(running, desired);
    const writers = exists ? history(family, id) : NO_HISTORY;
    // Fields that agree with the file and were last set at runtime: the file adopts them. Lifecycle
    // (`status`) and a key's secret (`hash`) are not settings the file reconciles here.
    for (const [field, writer] of writers) {
      if (field === 'status' || field === 'hash' || isConfigurationActor(writer.actor) || differing.includes(field)) continue;
      adoptions.push(adoption(path, definition, family, id, field, field, running.get(field), writer));
    }
    // The file's fields, with the running value kept where a runtime edit owns the field.
    const fields = new Map(desired);
    const changes: FieldChange[] = [];
    for (const field of differing) {
      const writer = writers.get(field);
      const runtime = writer !== undefined && !isConfigurationActor(writer.actor);
      if (runtime && !overwrite) {
        drift.push(settingDrift(path, definition, field, desired.get(field), running.get(field), writer));
        fields.set(field, running.get(field));
        continue;
      }
      changes.push({ field, from: running.get(field) ?? null, to: desired.get(field) ?? null, ...(runtime ? { overwrites: writer } : {}) });
    }
    return { fields, changes };
  };

  config.providers.forEach((p, i) => {
    const path = `providers[${i}]`;
    const desired: ProviderSettings = { type: p.type, baseUrl: p.baseUrl, credentialRef: p.apiKey, apiVersion: p.apiVersion, region: p.region, allowPrivateNetwork: p.allowPrivateNetwork };
    const current = state.providers.get(p.id);
    if (current?.status === 'removed') {
      problems.push(`${path}: provider ${p.id} was removed; choose a new id`);
      return;
    }
    const exists = current !== undefined && current.status === 'active';
    const { fields, changes } = reconcile('provider', p.id, path, `provider ${p.id}`, fieldsOf(desired), definitionFields(state, 'provider', p.id), exists);
    if (changes.length === 0) return;
    const settings = definitionOf<ProviderSettings>(fields);
    // A change is checked here as its aggregate and safe publication will check it, so a dry run reports
    // an unsafe base URL or an unreadable reference, and a real run appends nothing before refusing.
    const problem = providerSettingsProblem(settings) ?? secretProblem(settings.credentialRef);
    if (problem) {
      problems.push(`${path}: ${problem}`);
      return;
    }
    const command: ProviderCommand = exists
      ? { type: 'UpdateProvider', providerId: p.id, settings }
      : { type: 'RegisterProvider', providerId: p.id, settings };
    steps.push({ family: 'provider', path, summary: `${exists ? 'update' : 'register'} provider ${p.id}`, command, changes, ...(exists ? {} : { creates: true as const }) });
  });

  config.deployments.forEach((d, i) => {
    const path = `deployments[${i}]`;
    const desired: DeploymentSettings = {
      providerId: d.provider, model: d.model, region: d.region, capabilities: [...d.capabilities].sort(), contextWindow: d.contextWindow,
      maxOutputTokens: d.maxOutputTokens, quotaGroup: d.quotaGroup, limits: d.limits,
    };
    const current = state.deployments.get(d.id);
    const writers = () => history('deployment', d.id);
    if (current?.status === 'retired') {
      problems.push(`${path}: deployment ${d.id} is retired; choose a new id`);
      return;
    }
    const exists = current !== undefined && current.status !== 'absent';
    const running = definitionFields(state, 'deployment', d.id);
    running.delete('status');
    const { fields, changes } = reconcile('deployment', d.id, path, `deployment ${d.id}`, fieldsOf(desired), running, exists);
    if (!exists) {
      steps.push({ family: 'deployment', path, summary: `register deployment ${d.id}`, command: { type: 'RegisterDeployment', deploymentId: d.id, settings: desired }, changes, creates: true });
    } else if (changes.length) {
      steps.push({ family: 'deployment', path, summary: `update deployment ${d.id}`, command: { type: 'UpdateDeployment', deploymentId: d.id, settings: definitionOf<DeploymentSettings>(fields) }, changes });
    }
    const status = exists ? current.status : 'active';
    if (d.disabled === true && status === 'active') {
      steps.push({
        family: 'deployment', path: `${path}.disabled`, summary: `disable deployment ${d.id}`, command: { type: 'DisableDeployment', deploymentId: d.id, reason: 'configuration' },
        changes: [{ field: 'status', from: 'active', to: 'disabled' }],
      });
    } else if (d.disabled === true && status === 'disabled') {
      const writer = writers().get('status');
      if (writer && !isConfigurationActor(writer.actor)) adoptions.push(adoption(`${path}.disabled`, `deployment ${d.id}`, 'deployment', d.id, 'status', 'status', 'disabled', writer));
    } else if (d.disabled !== true && status === 'disabled') {
      const writer = writers().get('status');
      if (writer && isConfigurationActor(writer.actor)) {
        steps.push({
          family: 'deployment', path: `${path}.disabled`, summary: `enable deployment ${d.id}`, command: { type: 'EnableDeployment', deploymentId: d.id },
          changes: [{ field: 'status', from: 'disabled', to: 'active' }],
        });
      } else {
        drift.push(lifecycleDrift(path, `deployment ${d.id}`, 'active', 'disabled', writer,
          `deployment ${d.id} was disabled at runtime and stays disabled`, `enable it with POST /admin/v1/deployments/${d.id}/enable`));
      }
    }
    planPrice(d, i, state, options.now, overwrite, history, steps, drift, problems, adoptions);
  });

  config.contentPolicies.forEach((p, i) => {
    const path = `contentPolicies[${i}]`;
    const current = state.contentPolicies.get(p.id);
    // A retired policy the file declares is defined again (a new version), as the file says it.
    const live = current?.status === 'live';
    const running = live ? definitionFields(state, 'content-policy', p.id) : new Map<string, unknown>();
    running.delete('status');
    const { fields, changes } = reconcile('content-policy', p.id, path, `content policy ${p.id}`, fieldsOf(p.definition), running, live);
    if (changes.length === 0) return;
    const definition = definitionOf<ContentPolicyDefinition>(fields);
    const problem = contentPolicySetupProblem(definition, options.env ?? process.env);
    if (problem) {
      problems.push(`${path}.tokenScope: ${problem}`);
      return;
    }
    const webhookProblem = contentPolicyWebhookProblem(definition);
    if (webhookProblem) {
      problems.push(`${path}.${webhookProblem}`);
      return;
    }
    const moderationProblem = definition.moderation ? fileModerationAliasProblem(config, state, definition.moderation.alias) : null;
    if (moderationProblem) {
      problems.push(`${path}.moderation.alias: ${moderationProblem}`);
      return;
    }
    steps.push({
      family: 'content-policy', path, summary: `${live ? 'update' : 'define'} content policy ${p.id}`, command: { type: 'DefineContentPolicy', policyId: p.id, definition },
      changes, ...(live ? {} : { creates: true as const }),
    });
  });
  // What `contentPolicy` may name: a policy the file declares, or one live already.
  const policies = new Set([
    ...config.contentPolicies.map((p) => p.id),
    ...[...state.contentPolicies].filter(([, policy]) => policy.status === 'live').map(([id]) => id),
  ]);
  const unknownPolicy = (path: string, policyId: string | null) => {
    if (policyId === null || policies.has(policyId)) return false;
    const why = state.contentPolicies.get(policyId)?.status === 'retired' ? 'is retired' : 'is not declared (contentPolicies) nor live';
    problems.push(`${path}.contentPolicy: content policy '${policyId}' ${why}`);
    return true;
  };

  config.tenants.forEach((t, i) => {
    const path = `tenants[${i}]`;
    if (unknownPolicy(path, t.contentPolicy)) return;
    const current = state.tenants.get(t.id);
    const exists = current !== undefined && current.status !== 'absent';
    if (!exists) {
      steps.push({ family: 'tenant', path, summary: `create tenant ${t.id}`, command: { type: 'CreateTenant', tenantId: t.id, name: t.name }, changes: [{ field: 'name', from: null, to: t.name }], creates: true });
    }
    if (exists && current.status === 'suspended') {
      const writer = history('tenant', t.id).get('status');
      if (writer && isConfigurationActor(writer.actor)) {
        steps.push({
          family: 'tenant', path, summary: `reinstate tenant ${t.id} (suspended by an earlier apply --prune)`, command: { type: 'ReinstateTenant', tenantId: t.id },
          changes: [{ field: 'status', from: 'suspended', to: 'active' }],
        });
      } else {
        drift.push(lifecycleDrift(path, `tenant ${t.id}`, 'active', 'suspended', writer,
          `tenant ${t.id} was suspended at runtime and stays suspended`, `reinstate it with POST /admin/v1/tenants/${t.id}/reinstate`));
      }
    }
    const running = exists
      ? fieldsOf({ limits: current.limits, budget: current.budget, contentPolicy: current.contentPolicy ?? null })
      : fieldsOf({ limits: NO_LIMITS, budget: null, contentPolicy: null });
    const desired = fieldsOf({ limits: t.limits, budget: t.budget, contentPolicy: t.contentPolicy });
    const { fields, changes } = reconcile('tenant', t.id, path, `tenant ${t.id}`, desired, running, exists);
    const merged = definitionOf<{ limits: TenantLimits; budget?: TenantBudget | null; contentPolicy?: string | null }>(fields);
    const limitChanges = changes.filter((c) => c.field.startsWith('limits.'));
    const budgetChanges = changes.filter((c) => c.field === 'budget' || c.field.startsWith('budget.'));
    const hookProblem = merged.budget?.webhook ? secretProblem(merged.budget.webhook.secret) : null;
    if (hookProblem) problems.push(`${path}.budget.webhook.secret: ${hookProblem.replace(/^apiKey /, '')}`);
    if (limitChanges.length) {
      steps.push({ family: 'tenant', path: `${path}.limits`, summary: `set limits of tenant ${t.id}`, command: { type: 'SetTenantLimits', tenantId: t.id, limits: merged.limits }, changes: limitChanges, ...(exists ? {} : { creates: true as const }) });
    }
    const policyChanges = changes.filter((c) => c.field === 'contentPolicy');
    if (policyChanges.length) {
      steps.push({
        family: 'tenant', path: `${path}.contentPolicy`, summary: `${merged.contentPolicy ? `attach content policy ${merged.contentPolicy} to` : 'detach the content policy of'} tenant ${t.id}`,
        command: { type: 'SetTenantContentPolicy', tenantId: t.id, policyId: merged.contentPolicy ?? null }, changes: policyChanges, ...(exists ? {} : { creates: true as const }),
      });
    }
    if (budgetChanges.length) {
      steps.push({ family: 'tenant', path: `${path}.budget`, summary: `set budget of tenant ${t.id}`, command: { type: 'SetTenantBudget', tenantId: t.id, budget: merged.budget ?? null }, changes: budgetChanges, ...(exists ? {} : { creates: true as const }) });
    }
  });

  config.aliases.forEach((a, i) => {
    const path = `aliases[${i}]`;
    const desired: AliasDefinition = {
      strategy: a.strategy,
      routes: a.routes.map((r) => ({ deploymentId: r.deployment, priority: r.priority, weight: r.weight })),
      policy: a.policy,
      visibility: a.visibility,
    };
    if (unknownPolicy(path, a.policy.contentPolicy ?? null)) return;
    const current = state.aliases.get(a.name);
    // A retired alias the file declares is published again, as the file says it.
    const published = current?.status === 'published';
    const running = published ? definitionFields(state, 'alias', a.name) : new Map<string, unknown>();
    running.delete('status');
    const { fields, changes } = reconcile('alias', a.name, path, `alias ${a.name}`, fieldsOf(desired), running, published);
    if (changes.length) {
      steps.push({ family: 'alias', path, summary: `publish alias ${a.name}`, command: { type: 'PublishAlias', alias: a.name, definition: definitionOf<AliasDefinition>(fields) }, changes, ...(published ? {} : { creates: true as const }) });
    }
  });

  const callable = new Set([
    ...config.aliases.map((a) => a.name),
    ...[...state.aliases].filter(([, alias]) => alias.status === 'published').map(([name]) => name),
  ]);
  config.apiKeys.forEach((k, i) => {
    const path = `apiKeys[${i}]`;
    const current = state.keys.get(k.id);
    if (unknownPolicy(path, k.contentPolicy)) return;
    const unknown = k.aliases.filter((alias) => !callable.has(alias));
    if (unknown.length) {
      problems.push(`${path}.aliases: ${unknown.map((a) => `'${a}'`).join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not a published or declared alias`);
      return;
    }
    if (current && current.status !== 'absent' && current.status !== 'active') {
      // A revoked or expired key never comes back; refusing to start over it would let one revocation stop the gateway.
      drift.push(lifecycleDrift(path, `key ${k.id}`, 'active', current.status, history('apikey', k.id).get('status'),
        `key ${k.id} is ${current.status} and stays so`, 'to replace it, issue a new key id'));
      return;
    }
    const secret = keySecret(k.key);
    if ('problem' in secret) {
      problems.push(`${path}.key: ${secret.problem}`);
      return;
    }
    const desiredGrant = {
      scopes: k.scopes, aliases: k.aliases, limits: k.limits, expiresAt: k.expiresAt, ...(k.budget ? { budget: k.budget } : {}),
      ...(k.contentPolicy ? { contentPolicy: k.contentPolicy } : {}),
    };
    if (!current || current.status === 'absent') {
      const hookProblem = k.budget?.webhook ? secretProblem(k.budget.webhook.secret) : null;
      if (hookProblem) problems.push(`${path}.budget.webhook.secret: ${hookProblem.replace(/^apiKey /, '')}`);
      const { changes } = reconcile('apikey', k.id, path, `key ${k.id}`, fieldsOf(desiredGrant), new Map(), false);
      steps.push({
        family: 'apikey', path, summary: `issue key ${k.id}`, changes, creates: true,
        command: { type: 'IssueApiKey', keyId: k.id, hash: secret.hash, prefix: secret.prefix, grant: { tenantId: k.tenant, ...desiredGrant } },
      });
    } else if (current.hash !== secret.hash) {
      problems.push(`${path}.key: key ${k.id} has a different secret; a secret changes only by an explicit rotation (switchyard keys rotate ${k.id})`);
    } else if (current.grant.tenantId !== k.tenant) {
      problems.push(`${path}.tenant: key ${k.id} belongs to tenant ${current.grant.tenantId}; a key never moves to another tenant`);
    } else {
      const running = definitionFields(state, 'apikey', k.id);
      running.delete('status');
      running.delete('hash');
      const { fields, changes } = reconcile('apikey', k.id, path, `key ${k.id}`, fieldsOf(desiredGrant), running, true);
      if (changes.length === 0) return;
      const grant = definitionOf<Omit<KeyGrant, 'tenantId'>>(fields);
      const hookProblem = grant.budget?.webhook ? secretProblem(grant.budget.webhook.secret) : null;
      if (hookProblem) problems.push(`${path}.budget.webhook.secret: ${hookProblem.replace(/^apiKey /, '')}`);
      const members = [...new Set(changes.map((c) => c.field.split('.')[0]))];
      steps.push({
        family: 'apikey', path, summary: `update key ${k.id} (${members.join(', ')})`, changes,
        command: { type: 'UpdateApiKey', keyId: k.id, grant: { tenantId: k.tenant, ...grant } },
      });
    }
  });

  if (options.prune) steps.push(...pruneSteps(config, state, drift));
  return { steps, problems, drift, adoptions };
}

/**
 * A deployment's price: the file's table against the version it would supersede (the one at the file's
 * `effectiveFrom`, else the latest). A version scheduled at runtime is a runtime edit like any other.
 * A new version starts at the file's `effectiveFrom`, else now.
 */
function planPrice(
  d: GatewayConfig['deployments'][number], index: number, state: ControlPlaneState, now: Date, overwrite: boolean,
  history: (family: DefinitionFamily, id: string) => FieldHistory, steps: PlannedStep[], drift: Drift[], problems: string[], adoptions: Adoption[],
): void {
  const path = `deployments[${index}].price`;
  const { effectiveFrom, ...table } = d.price;
  const schedule = state.prices.get(d.id)?.schedule ?? [];
  const latest = [...schedule].sort((a, b) => a.effectiveFrom.getTime() - b.effectiveFrom.getTime()).at(-1);
  const wanted = effectiveFrom ? new Date(effectiveFrom) : null;
  const superseded = wanted ? schedule.findLast((s) => s.effectiveFrom.getTime() === wanted.getTime()) : latest;
  const running = superseded ? fieldsOf({ ...superseded.table }) : new Map<string, unknown>();
  const differing = changedFields(running, fieldsOf({ ...table })).filter((field) => !samePriceField(running.get(field), (table as Record<string, unknown>)[field]));
  const writers = superseded ? history('price', d.id) : new Map<string, FieldWriter>();
  const writer = superseded ? writers.get(`v${superseded.version}.effectiveFrom`) : undefined;
  const runtime = writer !== undefined && !isConfigurationActor(writer.actor);
  if (superseded && differing.length === 0) {
    // The file's price is a version scheduled at runtime: the file adopts that version, every member of it.
    if (!runtime) return;
    const version = `v${superseded.version}.`;
    const note = `price version ${superseded.version} from ${superseded.effectiveFrom.toISOString()}`;
    const members: Record<string, unknown> = { ...superseded.table, effectiveFrom: superseded.effectiveFrom.toISOString() };
    for (const [tracked, member] of writers) {
      if (!tracked.startsWith(version) || isConfigurationActor(member.actor)) continue;
      const name = tracked.slice(version.length);
      adoptions.push(adoption(path.replace(/\.price$/, ''), `deployment ${d.id}`, 'price', d.id, `price.${name}`, tracked, members[name], member, note));
    }
    return;
  }
  if (runtime && !overwrite) {
    for (const field of differing) {
      const note = `price version ${superseded!.version} from ${superseded!.effectiveFrom.toISOString()}`;
      drift.push(settingDrift(path.replace(/\.price$/, ''), `deployment ${d.id}`, `price.${field}`, (table as Record<string, unknown>)[field], running.get(field), writer, note));
    }
    return;
  }
  if (!wanted && superseded && superseded.effectiveFrom > now) {
    // Prices are never edited: one starting now would be in force only until the later one starts.
    problems.push(`${path}: price version ${superseded.version} of ${d.id} starts at ${superseded.effectiveFrom.toISOString()}, later than now, and prices are never edited; ` +
      `give the file's price an effectiveFrom after it`);
    return;
  }
  const starts = wanted ?? now;
  const fields = superseded ? differing : changedFields(new Map(), fieldsOf({ ...table }));
  steps.push({
    family: 'price', path, summary: `schedule price for ${d.id}${wanted ? ` from ${wanted.toISOString()}` : ''}`,
    command: { type: 'SchedulePrice', deploymentId: d.id, effectiveFrom: starts, table },
    ...(superseded ? {} : { creates: true as const }),
    changes: fields.map((field) => ({
      field: `price.${field}`, from: running.get(field) ?? null, to: (table as Record<string, unknown>)[field] ?? null, ...(runtime ? { overwrites: writer } : {}),
    })),
  });
}

function settingDrift(path: string, definition: string, field: string, file: unknown, running: unknown, writer: FieldWriter | undefined, note?: string): Drift {
  const by = writer ? ` (set by ${writer.actor} at ${writer.at.toISOString()}${note ? `, ${note}` : ''})` : note ? ` (${note})` : '';
  return {
    path, definition, field, file: file ?? null, running: running ?? null, changedBy: writer?.actor ?? null, changedAt: writer?.at ?? null,
    resolution: KEEP_OR_OVERWRITE,
    message: `${path} ${definition}: ${field}: file ${shownValue(file)}, running ${shownValue(running)}${by}; ${KEEP_OR_OVERWRITE}`,
  };
}

function adoption(
  path: string, definition: string, family: DefinitionFamily, id: string, field: string, tracked: string, value: unknown, writer: FieldWriter, note?: string,
): Adoption {
  return {
    path, definition, family, id, field, tracked, value: value ?? null, adopts: writer,
    message: `${path} ${definition}: ${field}: ${shownValue(value)} (set by ${writer.actor} at ${writer.at.toISOString()}${note ? `, ${note}` : ''})`,
  };
}

function lifecycleDrift(path: string, definition: string, file: string, running: string, writer: FieldWriter | undefined, what: string, resolution: string): Drift {
  const by = writer ? ` (by ${writer.actor} at ${writer.at.toISOString()})` : '';
  return {
    path, definition, field: 'status', file, running, changedBy: writer?.actor ?? null, changedAt: writer?.at ?? null, resolution,
    message: `${path}: ${what}${by}; ${resolution}`,
  };
}

/** A field's value as the plan's lines show it: JSON, with a field that is not set shown as null. */
export function shownValue(value: unknown): string {
  return JSON.stringify(value ?? null);
}

/**
 * The hash and display prefix of a key from its reference: `env:`/`file:` resolve to the plaintext (read
 * once, never kept); `sha256:<hex>` is the stored hash itself (what `config export` writes), whose
 * plaintext the gateway never had — a key issued from it shows the bare `sk-sy-` prefix.
 */
function keySecret(reference: string): { hash: string; prefix: string } | { problem: string } {
  const stored = /^sha256:([0-9a-f]{64})$/.exec(reference);
  if (stored) return { hash: stored[1], prefix: 'sk-sy-…' };
  let plaintext: string;
  try {
    plaintext = resolveSecret(reference);
  } catch (error) {
    return { problem: `${reference} cannot be resolved: ${(error as Error).message}` };
  }
  if (!/^sk-sy-[0-9A-Za-z]{32}$/.test(plaintext)) return { problem: `the key behind ${reference} must look like sk-sy- followed by 32 letters and digits` };
  return { hash: hashApiKey(plaintext), prefix: displayPrefix(plaintext) };
}

function pruneSteps(config: GatewayConfig, state: ControlPlaneState, drift: Drift[]): PlannedStep[] {
  const steps: PlannedStep[] = [];
  const declared = {
    keys: new Set(config.apiKeys.map((k) => k.id)),
    aliases: new Set(config.aliases.map((a) => a.name)),
    deployments: new Set(config.deployments.map((d) => d.id)),
    providers: new Set(config.providers.map((p) => p.id)),
    tenants: new Set(config.tenants.map((t) => t.id)),
  };
  for (const [id, key] of state.keys) {
    if (key.status === 'active' && !declared.keys.has(id)) {
      steps.push({ family: 'apikey', path: 'apiKeys', summary: `revoke key ${id} (not declared)`, command: { type: 'RevokeApiKey', keyId: id, reason: 'pruned by apply' }, changes: [{ field: 'status', from: 'active', to: 'revoked' }] });
    }
  }
  // A moderation alias is retired only once no live policy moderates through it: after the policies this run retires.
  const moderations = moderationAliasesAfterPrune(config, state);
  const afterPolicies: PlannedStep[] = [];
  for (const [name, alias] of state.aliases) {
    if (alias.status === 'published' && !declared.aliases.has(name)) {
      const keptBy = moderations.kept.get(name);
      if (keptBy) {
        drift.push(lifecycleDrift('aliases', `alias ${name}`, 'retired', 'published', undefined,
          `alias ${name} is not declared but stays published: content policy ${keptBy.join(', ')} moderates through it`, 'change the policy\'s moderation.alias, then apply with --prune again'));
        continue;
      }
      const step: PlannedStep = { family: 'alias', path: 'aliases', summary: `retire alias ${name} (not declared)`, command: { type: 'RetireAlias', alias: name, reason: 'pruned by apply' }, changes: [{ field: 'status', from: 'published', to: 'retired' }] };
      (moderations.retired.has(name) ? afterPolicies : steps).push(step);
    }
  }
  for (const [id, deployment] of state.deployments) {
    if ((deployment.status === 'active' || deployment.status === 'disabled') && !declared.deployments.has(id)) {
      steps.push({ family: 'deployment', path: 'deployments', summary: `retire deployment ${id} (not declared)`, command: { type: 'RetireDeployment', deploymentId: id, reason: 'pruned by apply' }, changes: [{ field: 'status', from: deployment.status, to: 'retired' }] });
    }
  }
  for (const [id, provider] of state.providers) {
    if (provider.status === 'active' && !declared.providers.has(id)) {
      steps.push({ family: 'provider', path: 'providers', summary: `remove provider ${id} (not declared)`, command: { type: 'RemoveProvider', providerId: id, reason: 'pruned by apply' }, changes: [{ field: 'status', from: 'active', to: 'removed' }] });
    }
  }
  for (const [id, tenant] of state.tenants) {
    if (tenant.status === 'active' && !declared.tenants.has(id)) {
      steps.push({ family: 'tenant', path: 'tenants', summary: `suspend tenant ${id} (not declared)`, command: { type: 'SuspendTenant', tenantId: id, reason: 'pruned by apply' }, changes: [{ field: 'status', from: 'active', to: 'suspended' }] });
    }
  }
  // Last, after what referred to them is gone: a policy still attached after this apply stays live (retiring it would be refused).
  const attachedAfter = new Map<string, string[]>();
  const attach = (policyId: string | null | undefined, owner: string) => {
    if (policyId) attachedAfter.set(policyId, [...(attachedAfter.get(policyId) ?? []), owner]);
  };
  const fileTenants = new Map(config.tenants.map((t) => [t.id, t]));
  for (const [id, tenant] of state.tenants) {
    if (tenant.status !== 'absent') attach(fileTenants.has(id) ? fileTenants.get(id)!.contentPolicy : tenant.contentPolicy, `tenant ${id}`);
  }
  for (const key of config.apiKeys) attach(key.contentPolicy, `key ${key.id}`);
  for (const alias of config.aliases) attach(alias.policy.contentPolicy, `alias ${alias.name}`);
  const declaredPolicies = new Set(config.contentPolicies.map((p) => p.id));
  for (const [id, policy] of state.contentPolicies) {
    if (policy.status !== 'live' || declaredPolicies.has(id)) continue;
    const owners = attachedAfter.get(id);
    if (owners) {
      drift.push(lifecycleDrift('contentPolicies', `content policy ${id}`, 'retired', 'live', undefined,
        `content policy ${id} is not declared but stays live: ${owners.join(', ')} still ${owners.length === 1 ? 'names' : 'name'} it`, 'detach it there, then apply with --prune again'));
      continue;
    }
    steps.push({
      family: 'content-policy', path: 'contentPolicies', summary: `retire content policy ${id} (not declared)`, command: { type: 'RetireContentPolicy', policyId: id },
      changes: [{ field: 'status', from: 'live', to: 'retired' }],
    });
  }
  steps.push(...afterPolicies);
  return steps;
}

/**
 * The aliases policies moderate through after a prune: `kept` — of a policy the file declares, or of a live one the
 * prune keeps (still attached) — must stay published; `retired` — only of policies this prune retires — may be
 * retired once those policies are.
 */
function moderationAliasesAfterPrune(config: GatewayConfig, state: ControlPlaneState): { kept: Map<string, string[]>; retired: Set<string> } {
  const kept = new Map<string, string[]>();
  const keep = (alias: string, policyId: string) => kept.set(alias, [...(kept.get(alias) ?? []), policyId]);
  for (const policy of config.contentPolicies) if (policy.definition.moderation) keep(policy.definition.moderation.alias, policy.id);
  const declaredPolicies = new Set(config.contentPolicies.map((p) => p.id));
  const attached = new Set([
    ...config.tenants.map((t) => t.contentPolicy), ...config.apiKeys.map((k) => k.contentPolicy), ...config.aliases.map((a) => a.policy.contentPolicy),
    ...[...state.tenants].flatMap(([id, t]) => (t.status !== 'absent' && !config.tenants.some((declared) => declared.id === id) ? [t.contentPolicy] : [])),
  ].filter((id): id is string => typeof id === 'string'));
  const retired = new Set<string>();
  for (const [id, policy] of state.contentPolicies) {
    if (policy.status !== 'live' || declaredPolicies.has(id) || !policy.definition.moderation) continue;
    if (attached.has(id)) keep(policy.definition.moderation.alias, id);
    else retired.add(policy.definition.moderation.alias);
  }
  for (const alias of kept.keys()) retired.delete(alias);
  return { kept, retired };
}


function secretProblem(ref: string | null): string | null {
  if (!ref) return null;
  try {
    resolveSecret(ref);
    return null;
  } catch (error) {
    return `apiKey ${ref} cannot be resolved: ${(error as Error).message}`;
  }
}

/** Prices are decimal strings: "3" and "3.00" are one price. */
function samePriceField(a: unknown, b: unknown): boolean {
  const x = a ?? null;
  const y = b ?? null;
  if (typeof x === 'string' && typeof y === 'string' && /^\d/.test(x) && /^\d/.test(y)) return new Decimal(x).eq(y);
  return sameField(x, y);
}

/**
 * Why a policy's moderation alias cannot answer it, judged on the file where it declares the alias (its routes'
 * deployments and providers, from the file or the running catalog), and on the running catalog otherwise.
 */
function fileModerationAliasProblem(config: GatewayConfig, state: ControlPlaneState, alias: string): string | null {
  const declared = config.aliases.find((a) => a.name === alias);
  if (!declared) return moderationAliasProblem(state, alias);
  const serves = declared.routes.some((route) => {
    const deployment = config.deployments.find((d) => d.id === route.deployment);
    if (deployment) {
      if (deployment.disabled === true || !deployment.capabilities.includes('moderation')) return false;
      const provider = config.providers.find((p) => p.id === deployment.provider);
      const type = provider?.type ?? (() => {
        const running = state.providers.get(deployment.provider);
        return running?.status === 'active' ? running.settings.type : null;
      })();
      return type !== null && MODERATION_PROVIDER_TYPES.includes(type);
    }
    const running = state.deployments.get(route.deployment);
    if (!running || running.status !== 'active' || !running.settings.capabilities.includes('moderation')) return false;
    const provider = state.providers.get(running.settings.providerId);
    return provider?.status === 'active' && MODERATION_PROVIDER_TYPES.includes(provider.settings.type);
  });
  return serves ? null : `alias ${alias} has no route to a deployment with the \`moderation\` capability on a provider of type ${MODERATION_PROVIDER_TYPES.join(', ')}`;
}
