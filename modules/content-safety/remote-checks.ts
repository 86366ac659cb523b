import { Logger } from '@nestjs/common';
import type { PolicyWebhook, RemoteCheckDirection } from '../../events/index.js';
import type { HostResolver } from '../providers/index.js';
import { ContentPolicyViolation } from './content-policy-violation.js';
import type { FindingCounts } from './finding-counts.js';
import { type RemoteCheckFailureReason, RemoteCheckFailure, type RemoteVerdict, askWebhookGuardrail } from './webhook-guardrail.js';

/** The kinds of remote check: the `check` label of their metrics and the finding type of their manifest lines. */
export type RemoteCheckKind = 'webhook' | 'moderation';

/** Where remote checks report (the gateway's metrics): latency and outcome per policy, and why a check gave no verdict. */
export interface RemoteCheckObserver {
  checked(policy: string, check: RemoteCheckKind, outcome: 'allow' | 'block' | 'error', seconds: number): void;
  failed(policy: string, check: RemoteCheckKind, reason: RemoteCheckFailureReason, resolution: 'fail_open' | 'fail_closed'): void;
}

/** What remote checks need from the process: where they report, and (tests) how host names resolve. */
export interface RemoteCheckResources {
  observer?: RemoteCheckObserver;
  resolve?: HostResolver;
}

/** A remote check's `block`: a content-policy violation of finding type `webhook` (with the operator's reason) or `moderation`. */
export class RemoteCheckBlock extends ContentPolicyViolation {
  constructor(direction: RemoteCheckDirection, check: RemoteCheckKind, policy: { policyId: string; version: number }, readonly reason: string | null) {
    super(direction, check, [policy]);
  }
}

/**
 * A fail-closed remote check that gave no verdict (timeout, connection refused, 5xx, an answer that is no verdict):
 * the request is refused (503 guardrail_unavailable) rather than sent unchecked.
 */
export class RemoteCheckUnavailable extends Error {
  override readonly name = 'RemoteCheckUnavailable';
  constructor(
    readonly direction: RemoteCheckDirection,
    readonly check: RemoteCheckKind,
    readonly policy: { policyId: string; version: number },
    readonly reason: RemoteCheckFailureReason,
  ) {
    super(`the ${check} check of content policy ${policy.policyId}@${policy.version} gave no verdict (${reason})`);
  }
}

/** Who a request is, for a remote check: never more than ids. */
export interface RemoteCheckSubject {
  requestId: string;
  tenantId: string;
}

const logger = new Logger('RemoteChecks');

/**
 * Runs every webhook of the policies in force that looks at `direction`, concurrently, on the texts as the local
 * checks left them. Any `block` blocks (RemoteCheckBlock; the first policy in order is named); otherwise a check that
 * gave no verdict refuses the request when its policy is fail-closed (RemoteCheckUnavailable), and is counted and
 * let through when it is fail-open (manifest line `webhook` / `allow`). A block is counted as `webhook` / `block`.
 * The texts are never logged.
 */
export async function runWebhookChecks(
  checks: readonly PolicyWebhook[], direction: RemoteCheckDirection, texts: readonly string[], subject: RemoteCheckSubject,
  counts: FindingCounts, resources: RemoteCheckResources = {},
): Promise<void> {
  const due = checks.filter((check) => check.webhook.directions.includes(direction));
  if (due.length === 0 || texts.every((text) => text.length === 0)) return;
  const outcomes = await Promise.all(due.map((check) => ask(check, direction, texts, subject, resources)));
  const blocked = outcomes.findIndex((outcome) => outcome instanceof Object && 'action' in outcome && outcome.action === 'block');
  if (blocked >= 0) {
    counts.add('webhook', direction, 'block');
    const { policyId, version } = due[blocked];
    throw new RemoteCheckBlock(direction, 'webhook', { policyId, version }, (outcomes[blocked] as RemoteVerdict).reason ?? null);
  }
  for (const [index, outcome] of outcomes.entries()) {
    if (!(outcome instanceof RemoteCheckFailure)) continue;
    const { policyId, version, webhook } = due[index];
    resources.observer?.failed(policyId, 'webhook', outcome.reason, webhook.failOpen ? 'fail_open' : 'fail_closed');
    if (!webhook.failOpen) throw new RemoteCheckUnavailable(direction, 'webhook', { policyId, version }, outcome.reason);
    counts.add('webhook', direction, 'allow');
  }
}

async function ask(
  check: PolicyWebhook, direction: RemoteCheckDirection, texts: readonly string[], subject: RemoteCheckSubject, resources: RemoteCheckResources,
): Promise<RemoteVerdict | RemoteCheckFailure> {
  const started = performance.now();
  try {
    const verdict = await askWebhookGuardrail(check, { requestId: subject.requestId, tenantId: subject.tenantId, direction, texts }, {
      resolve: resources.resolve,
      onRefused: (host, address, reason) => logger.warn(`webhook of content policy ${check.policyId}: connection to ${host} (${address}) refused: ${reason.replace('on the provider', 'on the webhook')}`),
    });
    resources.observer?.checked(check.policyId, 'webhook', verdict.action, (performance.now() - started) / 1000);
    return verdict;
  } catch (error) {
    resources.observer?.checked(check.policyId, 'webhook', 'error', (performance.now() - started) / 1000);
    if (error instanceof RemoteCheckFailure) {
      logger.warn(`webhook of content policy ${check.policyId} (request ${subject.requestId}): ${error.message}`);
      return error;
    }
    throw error;
  }
}
