import { Column, Entity, PrimaryColumn } from 'typeorm';

export type SpendPeriod = 'day' | 'month';

/** Running spend per tenant and period (DESIGN §5: `tenant_spend`), derived from ledger rows. */
@Entity({ name: 'tenant_spend' })
export class TenantSpend {
  @PrimaryColumn({ name: 'tenant_id', type: 'text' })
  tenantId!: string;

  @PrimaryColumn({ type: 'text' })
  period!: SpendPeriod;

  @PrimaryColumn({ name: 'period_start', type: 'timestamptz' })
  periodStart!: Date;

  @Column({ name: 'spent_usd', type: 'numeric', precision: 38, scale: 12 })
  spentUsd!: string;

  /** Running saving of exact-cache hits in the period. */
  @Column({ name: 'saved_usd', type: 'numeric', precision: 38, scale: 12 })
  savedUsd!: string;
}
