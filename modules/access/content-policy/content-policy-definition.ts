import type { ContentPolicyDefinition } from '../../../events/index.js';
import { type ConfigFields, type DefinitionNode, type DefinitionReader, FIELD_TYPES, fieldChoices, fieldNames, inlineCode, isDefinitionNode } from '../../../src/kernel/index.js';
import { BUILT_IN_FINDING_TYPES, CONTENT_ACTIONS, contentPolicyProblems, normalizeContentPolicy, OUTPUT_ACTIONS, WEBHOOK_GUARDRAIL_TIMEOUT, MODERATION_CHECK_TIMEOUT, MODERATION_PROVIDER_TYPES } from '../../content-safety/index.js';

/**
 * A content policy as the configuration file declares it (`contentPolicies[]`) and the admin API takes it
 * (`PUT /admin/v1/content-policies/{id}`): the fields, and the one reader both use. The rules themselves
 * (finding types, actions per direction, custom patterns safe from catastrophic backtracking, bounds) are
 * content safety's (`contentPolicyProblems`), so the file, the API and the engine agree on what a policy is.
 */
const directionFields = (actions: readonly string[], direction: string): ConfigFields => ({
  ...Object.fromEntries(BUILT_IN_FINDING_TYPES.map((type) => [type, {
    type: fieldChoices(actions), default: inlineCode('allow'),
    meaning: type === 'prompt_injection' ? `what happens to prompt-injection heuristics' findings in the ${direction}` : `what happens to ${type.replace('_', ' ')} findings in the ${direction}`,
  }])),
  custom: {
    type: 'list of mappings', list: true, default: '`[]`', meaning: 'patterns of your own; a pattern that can backtrack catastrophically is refused when the policy is applied',
    fields: {
      name: { type: '1-40 of `a-z`, `0-9`, `-`, `_`', required: true, meaning: 'the finding type the pattern reports (in counts and errors, never the value)' },
      pattern: { type: 'regular expression (Unicode), at most 500 characters', required: true, meaning: 'no backreferences, lookarounds or nested repetitions' },
      action: { type: fieldChoices(actions), required: true, meaning: 'what happens to a match' },
    },
  },
  deny_terms: {
    type: 'mapping', default: 'none', meaning: 'terms that must not pass (case-insensitive, whole words)',
    fields: {
      terms: { type: 'list of strings (at most 10,000, each at most 200 characters)', required: true, meaning: 'the terms' },
      action: { type: fieldChoices(actions), required: true, meaning: 'what happens to any of them' },
    },
  },
});

export const CONTENT_POLICY_FIELDS: ConfigFields = {
  id: { type: FIELD_TYPES.id, required: true, meaning: "the policy's id, which tenants, keys and aliases name in `contentPolicy`" },
  input: { type: 'mapping', default: 'nothing scanned', meaning: 'actions per finding type on what the client sends', fields: directionFields(CONTENT_ACTIONS, 'request') },
  output: { type: 'mapping', default: 'nothing scanned', meaning: 'actions per finding type on what the provider answers (no `tokenize`)', fields: directionFields(OUTPUT_ACTIONS, 'answer') },
  tokenScope: {
    type: fieldChoices(['request', 'session']), default: inlineCode('request'),
    meaning: "where tokenized values' mappings live: the request's memory, or the session (`x-session-id`; Redis, encrypted; needs SWITCHYARD_PII_KEY)",
  },
  unresolvedTokenPolicy: {
    type: fieldChoices(['leave-masked', 'reject-buffered']), default: inlineCode('leave-masked'),
    meaning: 'a placeholder in an answer that cannot be recovered exactly: left as it is, or (buffered requests only) the request fails before any byte is sent',
  },
  placeholderInstruction: { type: 'boolean', default: '`false`', meaning: 'adds a short system instruction to copy placeholders verbatim when the input is tokenized' },
  webhook: {
    type: 'mapping', default: 'none',
    meaning: "a remote check of your own: the text, as the local checks left it, is POSTed to `url` after them; it answers `{ action: allow | block, reason? }` (docs/content-safety-remote.md)",
    fields: {
      url: { type: 'http(s) URL', required: true, meaning: 'where the check is POSTed; never a metadata or reserved address, and loopback, private or link-local only with `allowPrivateNetwork`' },
      secret: { type: FIELD_TYPES.secretReference, default: 'none (unsigned)', meaning: 'the HMAC-SHA256 key of the `x-switchyard-signature` header (`t=<unix seconds>,v1=<hex>`, over `<t>.<body>`)' },
      timeoutMs: { type: `integer 1-${WEBHOOK_GUARDRAIL_TIMEOUT.maxMs}`, default: inlineCode(String(WEBHOOK_GUARDRAIL_TIMEOUT.defaultMs)), meaning: 'how long the request waits for the verdict, connection included' },
      failOpen: { type: 'boolean', default: '`false`', meaning: 'without a verdict (timeout, refused, error status, no verdict in the answer): `true` lets the text through (counted), `false` refuses with 503 `guardrail_unavailable`' },
      directions: { type: 'list of `input`, `output`', default: '`[input]`', meaning: 'what is checked: the request before dispatch, and the buffered answer before it is sent (streamed answers are not sent to the webhook)' },
      allowPrivateNetwork: { type: 'boolean', default: '`false`', meaning: 'allows loopback, private and link-local addresses (never metadata ones)' },
    },
  },
  moderation: {
    type: 'mapping', default: 'none',
    meaning: "a moderation check through one of the gateway's own aliases (OpenAI `/v1/moderations`), billed to the tenant as a request of its own (docs/content-safety-remote.md)",
    fields: {
      alias: { type: 'alias name', required: true, meaning: `an alias with a route to a deployment with the \`moderation\` capability on a provider of type ${MODERATION_PROVIDER_TYPES.map((type) => inlineCode(type)).join(', ')}; refused when applied otherwise` },
      directions: { type: 'list of `input`, `output`', default: '`[input]`', meaning: 'what is checked: the request before dispatch, and the buffered answer before it is sent (streamed answers are not)' },
      failOpen: { type: 'boolean', default: '`false`', meaning: 'without a verdict (no route, provider down, timeout): `true` lets the text through (counted), `false` refuses with 503 `guardrail_unavailable`' },
      categories: { type: 'list of category names', default: 'any flagged category', meaning: 'block only when one of these categories is flagged (`violence`, `self-harm/intent`, …)' },
      timeoutMs: { type: `integer 1-${MODERATION_CHECK_TIMEOUT.maxMs}`, default: inlineCode(String(MODERATION_CHECK_TIMEOUT.defaultMs)), meaning: 'how long the request waits for the verdict, retries included' },
    },
  },
};

/** A policy's definition in the event form, with its id. */
export interface ContentPolicyDeclaration {
  id: string;
  definition: ContentPolicyDefinition;
}

/** A definition with no rules: what a reader returns after a problem, so reading can go on. */
const NOTHING: ContentPolicyDefinition = Object.freeze({ input: {}, output: {}, tokenScope: 'request', unresolvedTokenPolicy: 'leave-masked', placeholderInstruction: false });

/** One policy mapping at `path` (`contentPolicies[0]` in the file), id included. */
export function readContentPolicy(reader: DefinitionReader, node: DefinitionNode, path: string): ContentPolicyDeclaration {
  return { id: reader.id(node, path), definition: readContentPolicyDefinition(reader, node, path) };
}

/**
 * A policy's definition (the admin API body, where the id is the path's; an `id` member is accepted and
 * ignored there, since the file writes one), validated and with its defaults filled.
 */
export function readContentPolicyDefinition(reader: DefinitionReader, node: DefinitionNode, path: string): ContentPolicyDefinition {
  // Unknown fields in the file's words, as every other mapping reports them; content safety's own rules for the rest.
  const before = reader.problems.length;
  knownFields(reader, node, path);
  const unknown = reader.problems.length - before;
  const problems = contentPolicyProblems(node, path).filter((problem) => !/: unknown (field|finding type)\b/.test(problem));
  for (const problem of problems) {
    const colon = problem.indexOf(': ');
    if (colon < 0) reader.problem(path, problem);
    else reader.problem(problem.slice(0, colon), problem.slice(colon + 2));
  }
  return problems.length || unknown ? NOTHING : normalizeContentPolicy(node);
}

/** The policy's mappings against the schema's field lists: the policy itself, each direction, its custom patterns and deny terms, its remote checks. */
function knownFields(reader: DefinitionReader, node: DefinitionNode, path: string): void {
  reader.known(node, path, fieldNames(CONTENT_POLICY_FIELDS));
  for (const direction of ['input', 'output'] as const) {
    const rules = node[direction];
    if (!isDefinitionNode(rules)) continue;
    const at = `${path}.${direction}`;
    const fields = CONTENT_POLICY_FIELDS[direction].fields!;
    reader.known(rules, at, fieldNames(fields));
    if (Array.isArray(rules.custom)) {
      rules.custom.forEach((rule, index) => {
        if (isDefinitionNode(rule)) reader.known(rule, `${at}.custom[${index}]`, fieldNames(fields.custom.fields!));
      });
    }
    if (isDefinitionNode(rules.deny_terms)) reader.known(rules.deny_terms, `${at}.deny_terms`, fieldNames(fields.deny_terms.fields!));
  }
  if (isDefinitionNode(node.webhook)) reader.known(node.webhook, `${path}.webhook`, fieldNames(CONTENT_POLICY_FIELDS.webhook.fields!));
  if (isDefinitionNode(node.moderation)) reader.known(node.moderation, `${path}.moderation`, fieldNames(CONTENT_POLICY_FIELDS.moderation.fields!));
}
