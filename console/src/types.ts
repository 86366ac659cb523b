/** Shapes of the admin API answers the console reads (the admin controllers of each module, analytics, audit, observability). */

export interface Overview {
  window: { seconds: number };
  requestsPerSecond: number;
  errorsByClass: Record<string, number>;
  latencyMs: { p50: number | null; p95: number | null };
  spend: { todayUsd: string | number; yesterdayUsd: string | number };
  breakers: Array<{ deploymentId: string; state: string }>;
  projections: Array<{ name: string; lagEvents: number | null; lagSeconds: number | null; status: string }>;
  budgetAlerts: Array<{ tenantId: string; period: string; spentUsd: string | number; limitUsd: string | number; ratio: number }>;
}

export interface Provider {
  id: string; status: string; type: string; baseUrl: string | null; apiVersion: string | null; region: string | null;
  allowPrivateNetwork: boolean; version: number;
}

export interface PriceEntry {
  priceVersion: number; effectiveFrom: string; status: 'past' | 'in-effect' | 'scheduled';
  inputPer1M?: string; outputPer1M?: string; cachedInputPer1M?: string; cacheWritePer1M?: string; currency?: string;
  [member: string]: unknown;
}

export interface Deployment {
  id: string; status: string; provider: string; model: string; region: string | null; capabilities: string[];
  contextWindow: number | null; maxOutputTokens: number | null; quotaGroup: string | null; price: PriceEntry | null; version: number;
}

export interface PriceHistory { deployment: string; current: PriceEntry | null; history: PriceEntry[]; version: number }

export interface AliasRoute { deployment: string; priority: number; weight: number }

export interface Alias {
  name: string; status: string; aliasVersion: number; strategy: string; routes: AliasRoute[];
  policy: Record<string, unknown>; visibility: 'public' | 'private'; contentPolicy: string | null;
  serving: { aliasVersion: number; routes: Array<AliasRoute & { provider: string; model: string; status: string }> } | null;
  problems: string[]; version: number;
}

export interface AliasDryRun {
  dryRun: true;
  wouldAppend: string[];
  current: Alias | null;
  proposed: Pick<Alias, 'aliasVersion' | 'strategy' | 'routes' | 'policy' | 'visibility' | 'contentPolicy'>;
}

export interface Limits { rpm: number | null; tpm: number | null; inputTpm?: number; outputTpm?: number; maxConcurrency: number | null }

export interface Budget { monthlyUsd?: string; dailyUsd?: string; softPct: number; enforcement: 'hard' | 'soft'; webhook?: { url: string } }

export interface Tenant {
  id: string; name: string | null; status: string; limits: Limits; budget: Budget | null; contentPolicy: string | null;
  spend: { day: { spentUsd: string }; month: { spentUsd: string }; budgetUsedPct: number | null };
  version: number;
}

export interface ApiKey {
  id: string; tenant: string; prefix: string; status: string; scopes: string[]; aliases: string[]; limits: Limits;
  budget: Budget | null; contentPolicy: string | null; expiresAt: string | null; previousSecretValidUntil: string | null; version: number;
}

export interface IssuedKey extends ApiKey { key: string; notice: string; previousValidUntil?: string | null }

export interface ContentPolicy {
  id: string; status: string; streamVersion: number; version?: number;
  /** Where it is attached, as the API says it: `tenant acme`, `key k1`, `alias chat`. */
  attachedTo?: string[];
  [member: string]: unknown;
}

export interface RequestRow {
  requestId: string; at: string; tenantId: string | null; keyId: string | null; alias: string | null; status: string;
  attempts: number; latencyMs: number | null; inputTokens: number | null; outputTokens: number | null; costUsd: string | null;
}

export interface RecordedEventView {
  globalPosition: number; streamId: string; streamVersion: number; eventId: string; type: string; schemaVersion: number;
  recordedAt: string; data: Record<string, unknown>; metadata: Record<string, unknown>;
}

export interface EventPage { data: RecordedEventView[]; next: string; caughtUp?: boolean }

export interface SpendMetrics {
  requests: number; attempts: number; inputTokens: number; cachedInputTokens: number; cacheWriteTokens: number; outputTokens: number;
  reasoningTokens: number; costUsd: string; cacheHits: number; savedUsd: string;
}

export type SpendRow = SpendMetrics & { period: string } & Partial<Record<'tenant' | 'key' | 'alias' | 'deployment' | 'provider' | 'model', string>>;

export interface SpendDocument {
  source: string; fallback?: string; from: string; to: string; granularity: string; groupBy: string[]; rows: SpendRow[]; totals: SpendMetrics;
}

export interface AuditReport {
  ok: boolean; verifiedEvents: number; pendingEvents: number;
  /** null: verified from the first event; else the signed checkpoint the verification started at. */
  since: { sequence: number; globalPosition: number } | null;
  head: { sequence: number; globalPosition: number; hash: string } | null;
  checkpoints: { verified: number; signaturesChecked: boolean; latest: Checkpoint | null };
  problem: { kind: string; globalPosition: number | null; sequence: number | null; message: string } | null;
  signer: { algorithm: string; keyId: string } | null;
}

export interface Checkpoint { sequence: number; globalPosition: number; hash: string; algorithm: string; keyId: string; signature: string; signedAt: string }
