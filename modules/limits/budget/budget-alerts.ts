import { Logger } from '@nestjs/common';
import { tenantStream } from '../../../events/index.js';
import { type CommandExecutor, WrongExpectedVersionError, resolveSecret } from '../../../src/kernel/index.js';
import { type TenantCommand, tenantDecider } from '../../access/index.js';
import { type HostResolver, OutboundPolicyViolation, WEBHOOK_SIGNATURE_HEADER, webhookSignature } from '../../providers/index.js';
import type { ThresholdCrossing } from './budget-guard.js';
import { postWebhook } from './webhook-post.js';

export interface AlertSettings {
  /** Webhook attempts per threshold (the first included). */
  attempts: number;
  /** Wait before the n-th retry: `backoffMs × 2^(n-1)`. */
  backoffMs: number;
  timeoutMs: number;
  /** How webhook host names resolve (the system resolver unless a test injects one). */
  resolve?: HostResolver;
}

export const DEFAULT_ALERTS: AlertSettings = Object.freeze({ attempts: 4, backoffMs: 500, timeoutMs: 5_000 });

/**
 * Records a crossed budget threshold exactly once per threshold and period, however many nodes see it:
 * the tenant's stream is appended with the version it was read at, so of two nodes racing only one
 * appends (the other's retry finds it recorded and appends nothing). The node that appended it calls
 * the budget's webhook, signed with HMAC-SHA256, retrying with backoff, and records the delivery.
 */
export class BudgetAlerts {
  private static readonly logger = new Logger('BudgetAlerts');

  constructor(
    private readonly executor: CommandExecutor,
    private readonly nodeId: string,
    private readonly settings: AlertSettings = DEFAULT_ALERTS,
  ) {}

  /** Fire and forget: never delays or fails the request whose settlement crossed the threshold. */
  crossed(crossing: ThresholdCrossing): void {
    this.record(crossing).catch((error: Error) =>
      BudgetAlerts.logger.error(`budget threshold ${crossing.pct}% of ${crossing.scope.kind} ${crossing.scope.id} (${crossing.period}) not recorded: ${error.message}`));
  }

  /** Appends BudgetThresholdCrossed unless it is recorded; true when this call appended it. */
  async record(crossing: ThresholdCrossing): Promise<boolean> {
    const { scope } = crossing;
    const command = {
      type: 'RecordBudgetThreshold' as const,
      tenantId: scope.tenantId,
      ...(scope.kind === 'key' ? { keyId: scope.id } : {}),
      period: crossing.period, pct: crossing.pct, spentUsd: crossing.spentUsd, budgetUsd: crossing.budgetUsd,
    };
    const appended = await this.append(scope.tenantId, command);
    if (appended && scope.budget.webhook) await this.deliver(crossing, command);
    return appended;
  }

  /** One tenant command, decided again on the current stream when another writer appended first; true when it appended. */
  private async append(tenantId: string, command: TenantCommand): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      try {
        const outcome = await this.executor.execute(tenantStream(tenantId), tenantDecider, command, { now: new Date(), actor: `node:${this.nodeId}` });
        return outcome.events.length > 0;
      } catch (error) {
        if (!(error instanceof WrongExpectedVersionError) || attempt >= 5) throw error;
      }
    }
  }

  private async deliver(crossing: ThresholdCrossing, payload: TenantCommand): Promise<void> {
    const webhook = crossing.scope.budget.webhook!;
    const { type: _command, ...fields } = payload;
    const body = JSON.stringify({ type: 'budget.threshold_crossed', ...fields });
    let secret: string | null = null;
    try {
      secret = resolveSecret(webhook.secret);
    } catch (error) {
      BudgetAlerts.logger.error(`budget webhook of tenant ${crossing.scope.tenantId}: its secret cannot be read (${(error as Error).message}); not sent`);
    }
    let attempts = 0;
    let httpStatus: number | null = null;
    let delivered = false;
    while (secret !== null && attempts < this.settings.attempts && !delivered) {
      if (attempts > 0) await new Promise((resolve) => setTimeout(resolve, this.settings.backoffMs * 2 ** (attempts - 1)));
      attempts++;
      const timestamp = Math.floor(Date.now() / 1000);
      try {
        httpStatus = await postWebhook(
          { url: webhook.url, allowPrivateNetwork: webhook.allowPrivateNetwork === true },
          { 'content-type': 'application/json', [WEBHOOK_SIGNATURE_HEADER]: webhookSignature(secret, body, timestamp) },
          body,
          {
            timeoutMs: this.settings.timeoutMs,
            resolve: this.settings.resolve,
            onRefused: (host, address, reason) =>
              BudgetAlerts.logger.warn(`budget webhook of tenant ${crossing.scope.tenantId}: connection to ${host} (${address}) refused: ${reason.replace('on the provider', 'on the webhook')}`),
          },
        );
        delivered = httpStatus >= 200 && httpStatus < 300;
      } catch (error) {
        httpStatus = null;
        // The address policy will refuse the same address again: retrying only delays the record.
        if (isPolicyRefusal(error)) break;
      }
    }
    if (!delivered) BudgetAlerts.logger.warn(`budget webhook for ${crossing.scope.kind} ${crossing.scope.id} not delivered after ${attempts} attempts`);
    const { scope } = crossing;
    await this.append(scope.tenantId, {
      type: 'RecordBudgetAlert', tenantId: scope.tenantId, ...(scope.kind === 'key' ? { keyId: scope.id } : {}),
      period: crossing.period, pct: crossing.pct, delivered, attempts, httpStatus,
    });
  }
}

function isPolicyRefusal(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof OutboundPolicyViolation) return true;
  }
  return false;
}
