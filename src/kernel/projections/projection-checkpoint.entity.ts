import { Column, Entity, PrimaryColumn } from 'typeorm';

/** Where a durable projection has read up to (DESIGN §5: `projection_checkpoints`). */
@Entity({ name: 'projection_checkpoints' })
export class ProjectionCheckpoint {
  @PrimaryColumn({ type: 'text' })
  name!: string;

  /** xid8 of the last transaction read; a bigint column, carried as a decimal string. */
  @Column({ name: 'transaction_id', type: 'bigint' })
  transactionId!: string;

  @Column({ name: 'global_position', type: 'bigint' })
  globalPosition!: string;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt!: Date;
}
