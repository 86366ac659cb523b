import { ConfigurationError, type SettingsEnv, declareSettings, isSecretRef, resolveSecret, textSetting } from '../../src/kernel/index.js';
import { CheckpointKeyError, type CheckpointSigner, checkpointSigner } from './checkpoint-signer.js';

export interface AuditSettings {
  /**
   * `SWITCHYARD_AUDIT_SIGNING_KEY`: a secret reference (`env:NAME` or `file:PATH`) to the checkpoint key,
   * an HMAC-SHA256 secret of at least 32 bytes or an Ed25519 private key (PKCS#8 PEM). Unset: the chain
   * is kept but no checkpoint is signed, so a truncated tail cannot be told from a shorter log.
   */
  signingKeyRef: string | null;
  /**
   * `SWITCHYARD_AUDIT_CHECKPOINT_SECONDS` (default 10): a batch that finds the newest checkpoint older
   * than this ends with a new one. It bounds how much of the tail can be cut away unnoticed. 0 = every batch.
   */
  checkpointIntervalMs: number;
}

export const DEFAULT_CHECKPOINT_INTERVAL_MS = 10_000;

export const AUDIT_ENVIRONMENT = declareSettings('projections/audit-chain', {
  SWITCHYARD_AUDIT_SIGNING_KEY: {
    type: 'secret reference (`env:NAME` or `file:PATH`)',
    default: 'unset: no signed checkpoints',
    meaning:
      'the audit checkpoint key: an HMAC-SHA256 secret (at least 32 bytes) or an Ed25519 private key (PKCS#8 PEM). ' +
      'Without it the chain is kept but no checkpoint is signed, so a truncated tail cannot be told from a shorter log',
  },
  SWITCHYARD_AUDIT_CHECKPOINT_SECONDS: {
    type: 'number ≥ 0 (seconds)',
    default: `\`${DEFAULT_CHECKPOINT_INTERVAL_MS / 1000}\``,
    meaning: 'sign a checkpoint when the newest is older than this (`0` = every batch); bounds how much of the tail can be cut away unnoticed',
  },
});

export function readAuditSettings(env: SettingsEnv): AuditSettings {
  const ref = textSetting(env, AUDIT_ENVIRONMENT.SWITCHYARD_AUDIT_SIGNING_KEY) || null;
  if (ref !== null && !isSecretRef(ref)) {
    throw new ConfigurationError('SWITCHYARD_AUDIT_SIGNING_KEY must be a secret reference (env:NAME or file:PATH), never the key itself');
  }
  const seconds = textSetting(env, AUDIT_ENVIRONMENT.SWITCHYARD_AUDIT_CHECKPOINT_SECONDS);
  let checkpointIntervalMs = DEFAULT_CHECKPOINT_INTERVAL_MS;
  if (seconds !== undefined && seconds !== '') {
    const parsed = Number(seconds);
    if (!Number.isFinite(parsed) || parsed < 0) throw new ConfigurationError('SWITCHYARD_AUDIT_CHECKPOINT_SECONDS must be a non-negative number');
    checkpointIntervalMs = Math.round(parsed * 1000);
  }
  return { signingKeyRef: ref, checkpointIntervalMs };
}

/** Resolves the signing key once, at start; a configured key that cannot be used stops the start. */
export function openCheckpointSigner(settings: AuditSettings): CheckpointSigner | null {
  if (!settings.signingKeyRef) return null;
  try {
    return checkpointSigner(resolveSecret(settings.signingKeyRef));
  } catch (error) {
    if (error instanceof CheckpointKeyError) throw new ConfigurationError(`SWITCHYARD_AUDIT_SIGNING_KEY: ${error.message}`);
    throw new ConfigurationError(`SWITCHYARD_AUDIT_SIGNING_KEY cannot be resolved: ${(error as Error).message}`);
  }
}
