import { Column, Entity, PrimaryColumn } from 'typeorm';

/** One row per billable attempt (DESIGN §5: `cost_ledger`). Written only by the cost-ledger projection. */
@Entity({ name: 'cost_ledger' })
export class CostLedgerEntry {
  @PrimaryColumn({ name: 'request_id', type: 'text' })
  requestId!: string;

  @PrimaryColumn({ type: 'integer' })
  attempt!: number;

  @Column({ name: 'tenant_id', type: 'text' })
  tenantId!: string;

  @Column({ name: 'key_id', type: 'text' })
  keyId!: string;

  @Column({ type: 'text' })
  alias!: string;

  @Column({ name: 'deployment_id', type: 'text' })
  deploymentId!: string;

  @Column({ name: 'provider_id', type: 'text' })
  providerId!: string;

  @Column({ type: 'text' })
  model!: string;

  /** Token counts are bigint (issue 32: an upstream reported 3e9 prompt tokens); the driver reads them as decimal text. */
  @Column({ name: 'input_tokens', type: 'bigint' })
  inputTokens!: string;

  @Column({ name: 'cached_input_tokens', type: 'bigint' })
  cachedInputTokens!: string;

  @Column({ name: 'cache_write_tokens', type: 'bigint' })
  cacheWriteTokens!: string;

  @Column({ name: 'output_tokens', type: 'bigint' })
  outputTokens!: string;

  @Column({ name: 'reasoning_tokens', type: 'bigint' })
  reasoningTokens!: string;

  /** Exact decimal, carried as a string end to end. */
  @Column({ name: 'cost_usd', type: 'numeric', precision: 38, scale: 12 })
  costUsd!: string;

  /** What an exact-cache hit saved (the cached answer's original cost); 0 on provider attempts. */
  @Column({ name: 'saved_usd', type: 'numeric', precision: 38, scale: 12 })
  savedUsd!: string;

  @Column({ name: 'price_version', type: 'integer' })
  priceVersion!: number;

  @Column({ type: 'text' })
  outcome!: string;

  @Column({ name: 'usage_evidence', type: 'text' })
  usageEvidence!: string;

  @Column({ name: 'global_position', type: 'bigint' })
  globalPosition!: string;

  /** When the AttemptFinished event was recorded, so a rebuild reproduces the row exactly. */
  @Column({ name: 'recorded_at', type: 'timestamptz' })
  recordedAt!: Date;
}
