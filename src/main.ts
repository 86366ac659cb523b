import 'reflect-metadata';
import { endQuietlyOnClosedPipe, exitWhenFlushed } from './cli/output.js';
import { runCli } from './cli/run-cli.js';

endQuietlyOnClosedPipe();
const code = await runCli(process.argv.slice(2));
if (code >= 0) await exitWhenFlushed(code);
