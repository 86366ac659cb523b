import type { CheckpointSigner } from '../../projections/audit-chain/index.js';

/** DI token of what the audit trail's admin routes take from the bootstrap. */
export const AUDIT_TRAIL_SETTINGS = Symbol('AUDIT_TRAIL_SETTINGS');

export interface AuditTrailSettings {
  /** Signs checkpoints and verifies them by default; null without SWITCHYARD_AUDIT_SIGNING_KEY. */
  signer: CheckpointSigner | null;
}
