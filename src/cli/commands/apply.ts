import { NestFactory } from '@nestjs/core';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { type ApplyReport, adoptionLine, applyReport, changeLine } from '../../config/apply/apply-report.js';
import { ConfigApplier } from '../../config/apply/config-applier.js';
import { readEnvironment } from '../../config/environment.js';
import { parseGatewayConfig } from '../../config/gateway-config.js';
import { openPlatform } from '../../platform.js';
import { installPublicationGuard } from '../../publication-guard.js';
import { CliModule } from '../cli.module.js';
import { writeOut } from '../output.js';
import { runningServer, ServerRefusedError } from '../running-server.js';

/** An `env:` or `file:` reference anywhere in the file (a value of its own on a line). */
const SECRET_REFERENCE = /:\s*["']?(env|file):\S/;

export async function apply(file: string, options: { dryRun: boolean; prune: boolean; overwriteRuntimeEdits: boolean }): Promise<number> {
  const path = resolve(file);
  const text = readFileSync(path, 'utf8');
  const config = parseGatewayConfig(text, file);
  const environment = readEnvironment();
  const server = runningServer(environment);
  if (server) {
    // The server holds the embedded store: it plans (and, unless a dry run, applies) the file itself, so the
    // file's references resolve in the server's environment and files — not this shell's. Say so up front,
    // and again on a refusal, where a variable exported here but not there is the usual cause.
    const whose = `the running server's (pid ${server.pid}) environment and files, not this shell's`;
    if (SECRET_REFERENCE.test(text)) process.stderr.write(`Applying through the running server (pid ${server.pid}): env: and file: references resolve in ${whose}.\n`);
    let result: ApplyReport;
    try {
      result = await server.post<ApplyReport>('/admin/v1/config/apply', {
        yaml: text, source: path, dryRun: options.dryRun, prune: options.prune, overwriteRuntimeEdits: options.overwriteRuntimeEdits,
      });
    } catch (error) {
      if (error instanceof ServerRefusedError && /cannot be resolved|unresolvable/i.test(error.message)) {
        throw new ServerRefusedError(`${error.message}\n(References resolve in ${whose}: set the variable or file where the server runs and restart it, or stop the server and apply here.)`, error.status, error.code);
      }
      throw error;
    }
    if (!options.dryRun) result.steps.forEach((step, index) => process.stderr.write(progressLines(index + 1, result.steps.length, step)));
    return report(result, options.dryRun);
  }
  const platform = await openPlatform(environment, { runDurable: false });
  try {
    installPublicationGuard(platform);
    await platform.runner.start();
    const app = await NestFactory.createApplicationContext(CliModule.forRoot(platform), { logger: ['error', 'warn'] });
    const applier = app.get(ConfigApplier);
    const result = await applier.apply(config, {
      dryRun: options.dryRun,
      prune: options.prune,
      overwriteRuntimeEdits: options.overwriteRuntimeEdits,
      actor: `config:${path}`,
      onProgress: (done, total, step) => process.stderr.write(progressLines(done, total, applyReport({ steps: [step], appended: 0, drift: [] }).steps[0])),
    });
    await app.close();
    return report(applyReport(result), options.dryRun);
  } finally {
    await platform.close();
  }
}

/** A step done, and below it each field it changed. */
function progressLines(done: number, total: number, step: ApplyReport['steps'][number]): string {
  return `[${done}/${total}] ${step.summary}\n${step.changes.map((change) => `      ${changeLine(change)}\n`).join('')}`;
}

async function report(result: ApplyReport, dryRun: boolean): Promise<number> {
  let text = '';
  if (result.drift.length > 0) {
    text += `Drift: ${result.drift.length} runtime change(s) the file does not match, kept as they are:\n`;
    for (const drift of result.drift) text += `  ${drift.message}\n`;
  }
  // `?? []`: a server of an earlier release answers without adoptions.
  const adoptions = result.adoptions ?? [];
  for (const adoption of adoptions) text += `${adoptionLine(adoption, dryRun)}\n`;
  if (result.steps.length === 0) {
    if (result.drift.length) text += 'Nothing to change apart from the drift above.\n';
    else if (adoptions.length) text += dryRun ? 'Nothing else to change (dry run, nothing appended).\n' : `Nothing else to change: the adoption is recorded (${result.appended} event(s) appended).\n`;
    else text += 'Nothing to change: the event store already matches the file.\n';
  } else if (dryRun) {
    text += `Plan (dry run, nothing appended): ${result.steps.length} change(s)\n`;
    for (const step of result.steps) {
      text += `  ${step.summary}   (${step.path})\n`;
      for (const change of step.changes) text += `      ${changeLine(change)}\n`;
    }
  } else text += `Applied ${result.steps.length} change(s): ${result.appended} event(s) appended.\n`;
  await writeOut(text);
  return 0;
}
