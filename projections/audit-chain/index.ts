/** The audit chain's public surface: the hash-chained, optionally signed trail of every event (DESIGN §5). */
export { AuditChainProjection } from './audit-chain.projection.js';
export { AUDIT_ENVIRONMENT, type AuditSettings, openCheckpointSigner, readAuditSettings } from './audit-settings.js';
export { GENESIS_HASH, STORED_EVENT_COLUMNS, type StoredEvent, type StoredEventRow, canonicalEvent, chainHash, storedEvent } from './canonical-event.js';
export { type CheckpointSigner, ed25519Verifier } from './checkpoint-signer.js';
