import { NestFactory } from '@nestjs/core';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigApplier } from '../../config/apply/config-applier.js';
import { readEnvironment } from '../../config/environment.js';
import { parseGatewayConfig } from '../../config/gateway-config.js';
import { openPlatform } from '../../platform.js';
import { installPublicationGuard } from '../../publication-guard.js';
import { CliModule } from '../cli.module.js';

export async function apply(file: string, options: { dryRun: boolean; prune: boolean }): Promise<number> {
  const path = resolve(file);
  const config = parseGatewayConfig(readFileSync(path, 'utf8'), file);
  const platform = await openPlatform(readEnvironment(), { runDurable: false });
  try {
    installPublicationGuard(platform);
    await platform.runner.start();
    const app = await NestFactory.createApplicationContext(CliModule.forRoot(platform), { logger: ['error', 'warn'] });
    const applier = app.get(ConfigApplier);
    const result = await applier.apply(config, {
      dryRun: options.dryRun,
      prune: options.prune,
      actor: `config:${path}`,
      onProgress: (done, total, step) => process.stderr.write(`[${done}/${total}] ${step.summary}\n`),
    });
    await app.close();
    if (result.drift.length > 0) {
      process.stdout.write(`Drift: ${result.drift.length} runtime change(s) the file does not match, kept as they are:\n`);
      for (const line of result.drift) process.stdout.write(`  ${line}\n`);
    }
    if (result.steps.length === 0) {
      process.stdout.write(result.drift.length ? 'Nothing to change apart from the drift above.\n' : 'Nothing to change: the event store already matches the file.\n');
    } else if (options.dryRun) {
      process.stdout.write(`Plan (dry run, nothing appended): ${result.steps.length} change(s)\n`);
      for (const step of result.steps) process.stdout.write(`  ${step.summary}   (${step.path})\n`);
    } else process.stdout.write(`Applied ${result.steps.length} change(s): ${result.appended} event(s) appended.\n`);
    return 0;
  } finally {
    await platform.close();
  }
}
