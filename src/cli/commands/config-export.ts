import { writeFileSync } from 'node:fs';
import { CONTROL_PLANE_EVENT_TYPES } from '../../../events/index.js';
import { ControlPlaneState } from '../../../projections/control-plane/index.js';
import { readEnvironment } from '../../config/environment.js';
import { exportConfiguration } from '../../config/export/configuration-export.js';
import { START } from '../../kernel/event-store/event-store.js';
import type { SqlEventStore } from '../../kernel/event-store/sql-event-store.js';
import { openPlatform } from '../../platform.js';
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
      yaml = exportConfiguration(await controlPlaneOf(platform.store), new Date());
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

/**
 * The control plane folded from the log's catalog and access events alone: the export needs no projection
 * (whose start would resolve provider secrets) and no provider secret.
 */
export async function controlPlaneOf(store: SqlEventStore): Promise<ControlPlaneState> {
  let state = ControlPlaneState.empty();
  for (let from = START; ;) {
    const page = await store.readAll(from, { limit: 1000, types: CONTROL_PLANE_EVENT_TYPES });
    state = state.withAll(page.events);
    if (page.caughtUp) return state;
    from = page.next;
  }
}
