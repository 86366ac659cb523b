import { KEY_SCOPES, type KeyGrant, type TenantBudget } from '../../../events/index.js';
import { LIMITS_FIELDS, readLimits } from '../../admin/index.js';
import { type ConfigFields, type DefinitionNode, type DefinitionReader, FIELD_TYPES, fieldChoices, fieldList, fieldNames, SECRET_REFERENCE_SHAPE } from '../../../src/kernel/index.js';
import { BUDGET_FIELDS, readBudget } from '../tenant/tenant-definition.js';
import { DEFAULT_KEY_SCOPES } from './api-key.decider.js';
import { readContentPolicyReference } from '../content-policy/content-policy-reference.js';

/**
 * A gateway key as the configuration file declares it and the admin API takes it (`POST` and `PATCH
 * /admin/v1/keys`): the fields, and the readers both use (DESIGN §8). The file names the secret (`key`);
 * the API generates it and shows it once, so its body has no `key`, and `id` may be left out there.
 */
export const API_KEY_FIELDS: ConfigFields = {
  id: { type: FIELD_TYPES.id, required: true, meaning: "the key's id (in logs, the ledger and the admin API; never the secret)" },
  tenant: { type: 'tenant id', required: true, meaning: 'a tenant declared in the same file; a key never moves to another tenant' },
  key: {
    type: `${FIELD_TYPES.secretReference}, or \`sha256:HEX\``, required: true,
    meaning: 'the plaintext key (`sk-sy-` + 32 base62 characters), read once and stored as a SHA-256 hash; or that hash itself as `sha256:` + 64 hex digits ' +
      '(what `switchyard config export` writes: the gateway never keeps the plaintext); a different secret later is refused (rotate with `switchyard keys rotate`)',
  },
  aliases: { type: 'list of alias names', default: '`[]` (every public alias)', meaning: 'the aliases the key may call' },
  scopes: { type: `list of ${fieldChoices(KEY_SCOPES)}`, default: fieldList(DEFAULT_KEY_SCOPES), meaning: 'what the key may do (write `"admin:platform"` in quotes in YAML flow lists)' },
  limits: { type: 'mapping', default: 'unlimited', meaning: "the key's own limits", fields: LIMITS_FIELDS },
  expiresAt: { type: 'ISO-8601 timestamp', default: 'never', meaning: 'when the key stops working' },
  budget: { type: 'mapping', default: 'no budget', meaning: "the key's own budget", fields: BUDGET_FIELDS },
  contentPolicy: { type: 'content policy id', default: 'none', meaning: "a content policy applied to the key's requests, on top of its tenant's and the alias's (the strictest action wins)" },
};

/** What a key may do, without the tenant it belongs to: the members a key's definition can change. */
export type KeyGrantMembers = Omit<KeyGrant, 'tenantId' | 'budget' | 'contentPolicy'> & { budget: TenantBudget | null; contentPolicy: string | null };

/** The members that identify a key and never change once it is issued. */
const IDENTITY = ['id', 'tenant', 'key'] as const;

type MemberReader<K extends keyof KeyGrantMembers> = (reader: DefinitionReader, node: DefinitionNode, path: string) => KeyGrantMembers[K];

/** How each changeable member is read; a member absent or null reads as the file's default. */
const MEMBER_READERS: { [K in keyof KeyGrantMembers]: MemberReader<K> } = {
  scopes: (reader, node, path) => reader.choiceList(node, path, 'scopes', KEY_SCOPES, 'scope') ?? [...DEFAULT_KEY_SCOPES],
  aliases: (reader, node, path) => reader.stringList(node, path, 'aliases') ?? [],
  limits: readLimits,
  expiresAt: (reader, node, path) => reader.timestamp(node, path, 'expiresAt'),
  budget: readBudget,
  contentPolicy: readContentPolicyReference,
};

/** A key's definition: `key` is the secret reference the file names; null where the API generates the secret. */
export interface ApiKeyDefinition extends KeyGrantMembers {
  id: string | null;
  tenant: string;
  key: string | null;
}

/**
 * One key mapping at `path`. `file`: as the configuration file writes it (`id` and `key` required).
 * `api`: the body of `POST /admin/v1/keys` (no `key`: the API generates the secret; `id` generated when absent).
 */
export function readApiKey(reader: DefinitionReader, node: DefinitionNode, path: string, form: 'file' | 'api'): ApiKeyDefinition {
  reader.known(node, path, fieldNames(API_KEY_FIELDS));
  const tenant = reader.string(node, path, 'tenant');
  const key = form === 'file' ? fileKey(reader, node, path) : null;
  if (form === 'api' && node.key !== undefined) {
    reader.problem(`${path}.key`, 'the admin API makes the secret and answers it once; a secret of your own is declared in the configuration file (key: env:NAME or file:PATH)');
  }
  const scopes = MEMBER_READERS.scopes(reader, node, path);
  const id = form === 'file' || node.id !== undefined ? reader.id(node, path) : null;
  return {
    id,
    tenant,
    key,
    aliases: MEMBER_READERS.aliases(reader, node, path),
    scopes,
    limits: MEMBER_READERS.limits(reader, node, path),
    expiresAt: MEMBER_READERS.expiresAt(reader, node, path),
    budget: MEMBER_READERS.budget(reader, node, path),
    contentPolicy: MEMBER_READERS.contentPolicy(reader, node, path),
  };
}

/** `sha256:<hex>`: the stored hash of a key whose plaintext is not at hand (what `config export` writes). */
const STORED_KEY_HASH = /^sha256:[0-9a-f]{64}$/;

/** The file's `key`: a secret reference, or the stored hash of the key. */
function fileKey(reader: DefinitionReader, node: DefinitionNode, path: string): string {
  const value = node.key;
  if (typeof value === 'string' && STORED_KEY_HASH.test(value)) return value;
  const key = reader.string(node, path, 'key');
  if (key && !SECRET_REFERENCE_SHAPE.test(key)) {
    reader.problem(`${path}.key`, 'must be a secret reference (env:NAME or file:PATH) or the stored hash (sha256: and 64 hex digits), never the key itself');
  }
  return key;
}

/**
 * The body of `PATCH /admin/v1/keys/{id}`: the members present replace the key's, the others stay; a
 * member sent as `null` goes back to what leaving it out of the file means (no expiry, no budget,
 * unlimited, every public alias, the default scopes).
 */
export function readKeyChanges(reader: DefinitionReader, node: DefinitionNode): Partial<KeyGrantMembers> {
  const changeable = fieldNames(API_KEY_FIELDS).filter((name) => !(IDENTITY as readonly string[]).includes(name));
  reader.known(node, '', changeable);
  const changes: Partial<Record<keyof KeyGrantMembers, unknown>> = {};
  for (const name of Object.keys(MEMBER_READERS) as Array<keyof KeyGrantMembers>) {
    if (name in node) changes[name] = MEMBER_READERS[name](reader, node, '');
  }
  return changes as Partial<KeyGrantMembers>;
}

/** The grant a key's definition gives (the budget and content policy left out when there are none, as the events write it). */
export function grantOf(tenantId: string, members: KeyGrantMembers): KeyGrant {
  const { budget, contentPolicy, ...rest } = members;
  return {
    tenantId, scopes: rest.scopes, aliases: rest.aliases, limits: rest.limits, expiresAt: rest.expiresAt, ...(budget ? { budget } : {}),
    ...(contentPolicy ? { contentPolicy } : {}),
  };
}

