import { NestFactory } from '@nestjs/core';
import { writeFileSync } from 'node:fs';
import { ConfigApplier } from '../../config/apply/config-applier.js';
import { readEnvironment } from '../../config/environment.js';
import { exportConfiguration } from '../../config/export/configuration-export.js';
import { openPlatform } from '../../platform.js';
import { CliModule } from '../cli.module.js';
import { writeOut } from '../output.js';
import { runningServer } from '../running-server.js';

/**
 * `switchyard config export [--out FILE]`: the running definitions as a configuration file, through the
 * running server when it holds the embedded store, else from the store directly.
 */
export async function configExport(options: { out: string | null }): Promise<number> {
  const environment = readEnvironment();
  const server = runningServer(environment);
  let yaml: string;
  if (server) {
    yaml = (await server.get<{ yaml: string }>('/admin/v1/config/export')).yaml;
  } else {
    const platform = await openPlatform(environment, { runDurable: false });
    try {
      await platform.runner.start();
      const app = await NestFactory.createApplicationContext(CliModule.forRoot(platform), { logger: ['error', 'warn'] });
      yaml = exportConfiguration(await app.get(ConfigApplier).currentState(), new Date());
      await app.close();
    } finally {
      await platform.close();
    }
  }
  if (!options.out) {
    await writeOut(yaml);
    return 0;
  }
  try {
    writeFileSync(options.out, yaml, { mode: 0o644 });
  } catch (error) {
    process.stderr.write(`switchyard config export: cannot write ${options.out}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}\n`);
    return 1;
  }
  process.stderr.write(`Wrote the running configuration to ${options.out}\n`);
  return 0;
}
