import type { SqlExecutor } from '../kernel/database/database.js';

/**
 * What the verification compares between source and target, each read the same way on both: a count, the
 * money summed exactly (numeric, as text), and an md5 over every row in a fixed order — text ordered by its
 * bytes (`COLLATE "C"`, which does not depend on either cluster's locale), timestamps in UTC with their
 * microseconds.
 */
export interface TableDigest {
  rows: number;
  /** Exact sums, by name (e.g. `costUsd`). */
  sums: Record<string, string>;
  digest: string;
}

/** One line of a per-group breakdown (tenant and UTC day): what names the first difference when digests differ. */
export interface GroupLine {
  group: string;
  rows: number;
  sum: string;
}

const UTC_MICROS = `'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'`;

export async function ledgerDigest(executor: SqlExecutor): Promise<TableDigest> {
  const [row] = await executor.query<{ n: string; cost: string; saved: string; digest: string }>(
    `SELECT count(*)::text AS n, coalesce(sum(cost_usd), 0)::text AS cost, coalesce(sum(saved_usd), 0)::text AS saved,
       md5(coalesce(string_agg(concat_ws('|', request_id, attempt, tenant_id, key_id, alias, deployment_id, provider_id, model,
         input_tokens, cached_input_tokens, cache_write_tokens, output_tokens, reasoning_tokens, cost_usd, saved_usd, price_version,
         outcome, usage_evidence, global_position, to_char(recorded_at AT TIME ZONE 'UTC', ${UTC_MICROS})), E'\\n'
         ORDER BY request_id COLLATE "C", attempt), '')) AS digest
     FROM cost_ledger`,
  );
  return { rows: Number(row.n), sums: { costUsd: row.cost, savedUsd: row.saved }, digest: row.digest };
}

/** The ledger per tenant and UTC day: rows and cost. */
export async function ledgerByTenantDay(executor: SqlExecutor): Promise<GroupLine[]> {
  const rows = await executor.query<{ tenant_id: string; day: string; n: string; cost: string }>(
    `SELECT tenant_id, to_char(recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, count(*)::text AS n, sum(cost_usd)::text AS cost
     FROM cost_ledger GROUP BY 1, 2 ORDER BY tenant_id COLLATE "C", 2`,
  );
  return rows.map((r) => ({ group: `${r.tenant_id} ${r.day}`, rows: Number(r.n), sum: r.cost }));
}

export async function spendDigest(executor: SqlExecutor): Promise<TableDigest> {
  const [row] = await executor.query<{ n: string; spent: string; saved: string; digest: string }>(
    `SELECT count(*)::text AS n, coalesce(sum(spent_usd), 0)::text AS spent, coalesce(sum(saved_usd), 0)::text AS saved,
       md5(coalesce(string_agg(concat_ws('|', tenant_id, period, to_char(period_start AT TIME ZONE 'UTC', ${UTC_MICROS}), spent_usd, saved_usd), E'\\n'
         ORDER BY tenant_id COLLATE "C", period COLLATE "C", period_start), '')) AS digest
     FROM tenant_spend`,
  );
  return { rows: Number(row.n), sums: { spentUsd: row.spent, savedUsd: row.saved }, digest: row.digest };
}

/** Tenant spend per tenant and period kind: rows and amount. */
export async function spendByTenant(executor: SqlExecutor): Promise<GroupLine[]> {
  const rows = await executor.query<{ tenant_id: string; period: string; n: string; spent: string }>(
    `SELECT tenant_id, period, count(*)::text AS n, sum(spent_usd)::text AS spent FROM tenant_spend GROUP BY 1, 2 ORDER BY tenant_id COLLATE "C", period COLLATE "C"`,
  );
  return rows.map((r) => ({ group: `${r.tenant_id} ${r.period}`, rows: Number(r.n), sum: r.spent }));
}

export interface ChainHead {
  sequence: number;
  globalPosition: number;
  hash: string;
}

export async function auditChainHead(executor: SqlExecutor): Promise<ChainHead | null> {
  const [row] = await executor.query<{ sequence: string; global_position: string; hash: string }>(
    `SELECT c.sequence::text AS sequence, c.global_position::text AS global_position, c.hash FROM audit_chain c ORDER BY c.sequence DESC LIMIT 1`,
  );
  return row ? { sequence: Number(row.sequence), globalPosition: Number(row.global_position), hash: row.hash } : null;
}

/** The copied tables outside the log, row for row (admin tokens by id and hash; checkpoints with their signatures). */
export async function unrebuildableDigest(executor: SqlExecutor): Promise<TableDigest> {
  const [row] = await executor.query<{ tokens: string; checkpoints: string; digest: string }>(
    `SELECT (SELECT count(*) FROM admin_tokens)::text AS tokens, (SELECT count(*) FROM audit_checkpoints)::text AS checkpoints,
       md5(coalesce((SELECT string_agg(concat_ws('|', token_id, hash, origin, to_char(created_at AT TIME ZONE 'UTC', ${UTC_MICROS})), E'\\n' ORDER BY token_id COLLATE "C") FROM admin_tokens), '')
         || '#' || coalesce((SELECT string_agg(concat_ws('|', sequence, global_position, hash, algorithm, key_id, signature, to_char(signed_at AT TIME ZONE 'UTC', ${UTC_MICROS})), E'\\n' ORDER BY sequence) FROM audit_checkpoints), '')) AS digest`,
  );
  return { rows: Number(row.tokens) + Number(row.checkpoints), sums: { adminTokens: row.tokens, auditCheckpoints: row.checkpoints }, digest: row.digest };
}
