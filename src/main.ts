import 'reflect-metadata';
import { runCli } from './cli/run-cli.js';

const code = await runCli(process.argv.slice(2));
if (code >= 0) process.exit(code);
