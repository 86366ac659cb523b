import { type ContentPolicyDefinition } from '../../../events/index.js';
import { type SettingsEnv, resolveSecret, SECRET_REFERENCE_SHAPE, textSetting } from '../../../src/kernel/index.js';
import { CONTENT_SAFETY_ENVIRONMENT } from '../../content-safety/index.js';

/** Why a policy cannot be defined on this installation as it is configured, or null. */
export function contentPolicySetupProblem(definition: ContentPolicyDefinition, env: SettingsEnv): string | null {
  if (definition.tokenScope !== 'session') return null;
  const reference = textSetting(env, CONTENT_SAFETY_ENVIRONMENT.SWITCHYARD_PII_KEY) ?? '';
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

/**
 * Why a policy's webhook cannot sign its calls on this node — its `secret` reference does not resolve — as
 * `webhook.secret: …`, or null. Refused when the policy is applied, rather than failing every request's check later.
 */
export function contentPolicyWebhookProblem(definition: ContentPolicyDefinition): string | null {
  const reference = definition.webhook?.secret;
  if (!reference) return null;
  try {
    resolveSecret(reference);
    return null;
  } catch (error) {
    return `webhook.secret: ${reference} cannot be resolved on this node (${(error as Error).message})`;
  }
}
