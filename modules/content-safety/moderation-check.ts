import { Logger } from '@nestjs/common';
import type { PolicyModeration, RemoteCheckDirection } from '../../events/index.js';
import type { FindingCounts } from './finding-counts.js';
import { RemoteCheckBlock, type RemoteCheckResources, type RemoteCheckSubject, RemoteCheckUnavailable } from './remote-checks.js';
import { RemoteCheckFailure } from './webhook-guardrail.js';

/** What a moderation alias answered: per text, whether it was flagged and in which categories. */
export interface ModerationVerdict {
  results: ReadonlyArray<{ flagged: boolean; categories: readonly string[] }>;
}

/**
 * Asks a moderation alias about texts, through the gateway's own routes (the inference pipeline provides it, per
 * request: the call is a request of its own, billed to the checked request's tenant and key). Rejects with a
 * RemoteCheckFailure when no verdict came within `timeoutMs`, and with the checked request's own refusal (a spent
 * budget, on input) when the call may not be made.
 */
export type ModerationCaller = (alias: string, texts: readonly string[], timeoutMs: number, direction: RemoteCheckDirection) => Promise<ModerationVerdict>;

const logger = new Logger('ModerationChecks');

/**
 * Runs every moderation check of the policies in force that looks at `direction`, concurrently, on the non-empty
 * texts as the local checks left them. A text flagged in one of the policy's `categories` (any category when it
 * names none) blocks (RemoteCheckBlock, finding type `moderation`); a check without a verdict refuses the request
 * when its policy is fail-closed (RemoteCheckUnavailable) and is counted and let through when fail-open. Without a
 * caller (an operation that makes no billed calls, such as count_tokens) nothing is asked.
 */
export async function runModerationChecks(
  checks: readonly PolicyModeration[], direction: RemoteCheckDirection, texts: readonly string[], subject: RemoteCheckSubject,
  counts: FindingCounts, caller: ModerationCaller | undefined, resources: RemoteCheckResources = {},
): Promise<void> {
  const due = checks.filter((check) => check.moderation.directions.includes(direction));
  const asked = texts.filter((text) => text.length > 0);
  if (!caller || due.length === 0 || asked.length === 0) return;
  const outcomes = await Promise.all(due.map((check) => ask(check, direction, asked, subject, caller, resources)));
  const blocked = outcomes.findIndex((outcome, index) => !(outcome instanceof RemoteCheckFailure) && flags(outcome, due[index]));
  if (blocked >= 0) {
    counts.add('moderation', direction, 'block');
    const { policyId, version } = due[blocked];
    throw new RemoteCheckBlock(direction, 'moderation', { policyId, version }, null);
  }
  for (const [index, outcome] of outcomes.entries()) {
    if (!(outcome instanceof RemoteCheckFailure)) continue;
    const { policyId, version, moderation } = due[index];
    resources.observer?.failed(policyId, 'moderation', outcome.reason, moderation.failOpen ? 'fail_open' : 'fail_closed');
    if (!moderation.failOpen) throw new RemoteCheckUnavailable(direction, 'moderation', { policyId, version }, outcome.reason);
    counts.add('moderation', direction, 'allow');
  }
}

/** Whether a verdict blocks under a policy: a flagged text, in one of its categories when it names some. */
function flags(verdict: ModerationVerdict, check: PolicyModeration): boolean {
  const only = check.moderation.categories;
  return verdict.results.some((result) => result.flagged && (!only || result.categories.some((category) => only.includes(category))));
}

async function ask(
  check: PolicyModeration, direction: RemoteCheckDirection, texts: readonly string[], subject: RemoteCheckSubject, caller: ModerationCaller, resources: RemoteCheckResources,
): Promise<ModerationVerdict | RemoteCheckFailure> {
  const started = performance.now();
  try {
    const verdict = await caller(check.moderation.alias, texts, check.moderation.timeoutMs, direction);
    resources.observer?.checked(check.policyId, 'moderation', flags(verdict, check) ? 'block' : 'allow', (performance.now() - started) / 1000);
    return verdict;
  } catch (error) {
    resources.observer?.checked(check.policyId, 'moderation', 'error', (performance.now() - started) / 1000);
    if (error instanceof RemoteCheckFailure) {
      logger.warn(`moderation check of content policy ${check.policyId} (request ${subject.requestId}): ${error.message}`);
      return error;
    }
    throw error;
  }
}
