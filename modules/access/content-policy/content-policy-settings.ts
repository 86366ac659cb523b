import { type ContentPolicyDefinition } from '../../../events/index.js';
import { type SettingsEnv, declareSettings, resolveSecret, SECRET_REFERENCE_SHAPE, textSetting } from '../../../src/kernel/index.js';

/**
 * The installation's PII key: the secret behind tokenized placeholders' MACs and the session vault's
 * encryption (content safety reads the key itself). Request scope needs none (a random per-process key
 * is enough for mappings that live in one request); session scope does, because every node must
 * recognise and decrypt a session's placeholders.
 */
export const CONTENT_POLICY_ENVIRONMENT = declareSettings('modules/access', {
  SWITCHYARD_PII_KEY: {
    type: 'secret reference: `env:NAME` or `file:PATH` (at least 32 bytes of secret)',
    default: 'unset: request-scope placeholders use a random per-process key; a policy with `tokenScope: session` is refused',
    meaning: 'the key of tokenized placeholders (MAC) and of the session vault (AES-GCM in Redis); the same on every node',
  },
});

/** Why a policy cannot be defined on this installation as it is configured, or null. */
export function contentPolicySetupProblem(definition: ContentPolicyDefinition, env: SettingsEnv): string | null {
  if (definition.tokenScope !== 'session') return null;
  const reference = textSetting(env, CONTENT_POLICY_ENVIRONMENT.SWITCHYARD_PII_KEY) ?? '';
  const refused = 'tokenScope session keeps placeholder mappings in Redis, encrypted and shared by every node, which needs SWITCHYARD_PII_KEY';
  if (reference === '') return `${refused}: set SWITCHYARD_PII_KEY to a secret reference (env:NAME or file:PATH) on every node, or use tokenScope request`;
  if (!SECRET_REFERENCE_SHAPE.test(reference)) return `${refused} as a secret reference (env:NAME or file:PATH), never the key itself`;
  let secret: string;
  try {
    secret = resolveSecret(reference);
  } catch (error) {
    return `${refused}, and ${reference} cannot be resolved on this node (${(error as Error).message})`;
  }
  if (Buffer.byteLength(secret.trim()) < 32) return `${refused} of at least 32 bytes; the secret behind ${reference} is shorter`;
  return null;
}
