import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The runner runs compiled, from dist/bench/; these are the places it starts things from. */
const distBench = dirname(fileURLToPath(import.meta.url));
export const repositoryRoot = join(distBench, '..', '..');
export const gatewayMain = join(distBench, '..', 'src', 'main.js');
/** Loaded into the gateway with --import by --gateway-profile. */
export const gatewayProfilerModule = join(distBench, 'profile', 'gateway-profiler.js');
/** Loaded into the gateway with --import by --gateway-phases. */
export const phaseProbeModule = join(distBench, 'profile', 'phase-probe.js');
export const helperModule = (name: string) => join(distBench, 'processes', `${name}.js`);
export const portkeyServer = join(repositoryRoot, 'node_modules', '@portkey-ai', 'gateway', 'build', 'start-server.js');
export const defaultResultsDir = join(repositoryRoot, 'bench', 'results');
