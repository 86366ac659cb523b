import { ConfigurationError, type SettingsEnv, declareSettings, inlineCode, textSetting } from '../../../src/kernel/index.js';

/**
 * When request events become durable (DESIGN §7):
 * - default: the request commits once — RequestAdmitted, every AttemptFinished and RequestCompleted in
 *   one group-committed append — before the last byte reaches the client (before `[DONE]` for streams,
 *   before the JSON body otherwise). Nothing is written before the first provider call, so admission
 *   costs no database round trip; a client that received a complete answer is always billed. A crash
 *   while a request is in flight leaves no trace of it in the log.
 * - strict: additionally, RequestAdmitted is committed on its own before the first provider call (the
 *   log shows every dispatched request even if the process dies mid-request); two commits per request.
 * - async: nothing waits for the database; the one append runs in the background. A crash can lose the
 *   events of requests answered in the last group-commit window (a few milliseconds), including their
 *   billing.
 * Every profile pins event ids, so an append retried after a lost connection is stored once.
 */
export type DurabilityProfile = 'default' | 'strict' | 'async';

export const DURABILITY_PROFILES: readonly DurabilityProfile[] = ['default', 'strict', 'async'];

export const DURABILITY_ENVIRONMENT = declareSettings('modules/inference/pipeline', {
  SWITCHYARD_DURABILITY: {
    type: DURABILITY_PROFILES.map(inlineCode).join(' | '),
    default: '`default`',
    meaning:
      '`default`: each request commits once (RequestAdmitted, its attempts and RequestCompleted in one append) before the last byte reaches the client, so every complete answer is billed; ' +
      '`strict`: also commits RequestAdmitted before the first provider call (two commits per request); ' +
      '`async`: nothing waits (a crash can lose the usage of requests answered in the last few ms)',
  },
});

/** SWITCHYARD_DURABILITY; `default` when unset. */
export function readDurability(env: SettingsEnv): DurabilityProfile {
  const durability = (textSetting(env, DURABILITY_ENVIRONMENT.SWITCHYARD_DURABILITY) ?? 'default') as DurabilityProfile;
  if (!DURABILITY_PROFILES.includes(durability)) {
    throw new ConfigurationError(`SWITCHYARD_DURABILITY must be one of ${DURABILITY_PROFILES.join(', ')}`);
  }
  return durability;
}
