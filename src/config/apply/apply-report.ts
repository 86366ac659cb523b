import { type Adoption, type FieldChange, type PlannedStep, shownValue } from './apply-plan.js';
import type { ApplyResult } from './config-applier.js';

/**
 * What an apply did or would do, as JSON: the answer of `POST /admin/v1/config/apply` and what the CLI
 * prints from, locally or through a running server. Values are the file's and the log's: secret
 * references and hashes, never a resolved secret.
 */
export interface ApplyReport {
  steps: Array<{
    summary: string; path: string; creates: boolean;
    changes: Array<{ field: string; from: unknown; to: unknown; overwrites?: { actor: string; at: string } }>;
  }>;
  appended: number;
  drift: Array<{
    path: string; definition: string; field: string; file: unknown; running: unknown; changedBy: string | null; changedAt: string | null;
    resolution: string; message: string;
  }>;
  /** Runtime edits the file now says too: adopted by this apply (appended with it), or on a dry run, that would be. */
  adoptions: Array<{
    path: string; definition: string; field: string; value: unknown; changedBy: string; changedAt: string; message: string;
  }>;
}

/** A result, or the part of one a step's progress line is made from (no adoptions). */
export function applyReport(result: ApplyResult | Omit<ApplyResult, 'adoptions'>): ApplyReport {
  return {
    steps: result.steps.map(stepReport),
    appended: result.appended,
    drift: result.drift.map((d) => ({ ...d, changedAt: d.changedAt?.toISOString() ?? null })),
    adoptions: ('adoptions' in result ? result.adoptions : []).map(adoptionReport),
  };
}

function adoptionReport(adoption: Adoption): ApplyReport['adoptions'][number] {
  return {
    path: adoption.path, definition: adoption.definition, field: adoption.field, value: adoption.value,
    changedBy: adoption.adopts.actor, changedAt: adoption.adopts.at.toISOString(), message: adoption.message,
  };
}

/**
 * One adopted field as a line: `would adopt …` on a dry run (nothing appended), `adopted …` once recorded,
 * after which the field is the file's and a later edit of it in the file applies.
 */
export function adoptionLine(adoption: ApplyReport['adoptions'][number], dryRun: boolean): string {
  return dryRun
    ? `would adopt ${adoption.message}: the file says the same as this runtime edit and would own the field again`
    : `adopted ${adoption.message}: the file says the same as this runtime edit and owns the field again`;
}

function stepReport(step: PlannedStep): ApplyReport['steps'][number] {
  return {
    summary: step.summary,
    path: step.path,
    creates: step.creates === true,
    changes: step.changes.map((change: FieldChange) => ({
      field: change.field, from: change.from, to: change.to,
      ...(change.overwrites ? { overwrites: { actor: change.overwrites.actor, at: change.overwrites.at.toISOString() } } : {}),
    })),
  };
}

/** One field a step changes, as a line: `policy.maxAttempts: null → 2`, and whose runtime edit it overwrites. */
export function changeLine(change: ApplyReport['steps'][number]['changes'][number]): string {
  const overwrites = change.overwrites ? ` (overwrites the runtime edit by ${change.overwrites.actor} at ${change.overwrites.at})` : '';
  return `${change.field}: ${shownValue(change.from)} → ${shownValue(change.to)}${overwrites}`;
}

/**
 * What a start that applied the configuration logs: how many changes, each change to an existing
 * definition one line per field (new definitions are the file's as written, and a first start makes
 * them all), each runtime edit the file adopted one line per field, and each drift field as a warning
 * (kept, with who changed it and what to do).
 */
export function startupApplyLog(source: string, result: ApplyResult): { log: string[]; warn: string[] } {
  const report = applyReport(result);
  const log = result.steps.length > 0 && result.appended > 0 ? [`applied ${source}: ${result.steps.length} change(s), ${result.appended} event(s)`] : [];
  for (const step of report.steps) {
    if (!step.creates) for (const change of step.changes) log.push(`applied ${step.path} (${step.summary}): ${changeLine(change)}`);
  }
  for (const adoption of report.adoptions) log.push(`${source} ${adoptionLine(adoption, false)}`);
  const warn = report.drift.map((drift) => `${source} differs from the running state, which is kept: ${drift.message}`);
  return { log, warn };
}
