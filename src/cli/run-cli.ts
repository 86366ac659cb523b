import { parseArgs } from 'node:util';
import { ConfigValidationError } from '../config/gateway-config.js';
import { ApplyRefusedError } from '../config/apply/config-applier.js';
import { ConfigurationError } from '../config/environment.js';
import type { KeyScope } from '../../events/api-key-events.js';
import { DomainError } from '../kernel/commands/decider.js';
import { apply } from './commands/apply.js';
import { keysIssue, keysRevoke } from './commands/keys.js';
import { eventsRead, eventsTail } from './commands/events.js';
import { mockProvider } from './commands/mock-provider.js';
import { projectionsRebuild, projectionsStatus } from './commands/projections.js';
import { projector } from './commands/projector.js';
import { serve } from './commands/serve.js';

const USAGE = `Usage: switchyard <command>

  serve                              run the gateway (PORT, HOST, SWITCHYARD_CONFIG, DATABASE_URL, SWITCHYARD_WORKERS, …)
  projector                          run the durable projections only (next to nodes with SWITCHYARD_PROJECTOR=external)
  apply -f FILE [--dry-run] [--prune]
                                     make the event store match a configuration file
  mock-provider [--port N] [--host H] [--latency-ms N] [--ttft-ms N] [--chunk-gap-ms N] [--chunks N]
                [--status N] [--retry-after S]
                                     run the mock provider (OpenAI-compatible, with fault injection)
  events tail [--from N] [--follow] [--type T ...]
                                     print the global event log as JSON lines
  events read STREAM                 print one stream (e.g. request-<id>, alias-chat)
  projections status                 positions of every projection
  projections rebuild NAME           rebuild a durable projection (cost-ledger) from position zero
  keys issue --tenant T [--id ID] [--scope S ...] [--alias A ...] [--expires-at ISO]
             [--rpm N] [--tpm N] [--max-concurrency N]
                                     issue a gateway key; prints it once on stdout
  keys revoke ID [--reason TEXT]     revoke a key (every node refuses it within a second)
`;

/** Runs one CLI command; resolves to the process exit code. */
export async function runCli(argv: string[]): Promise<number> {
  const [command, sub, ...rest] = argv;
  try {
    switch (command) {
      case undefined:
      case 'serve':
        await serve();
        return -1; // keep running
      case 'projector':
        await projector();
        return -1;
      case 'apply': {
        const { values } = parseArgs({
          args: argv.slice(1),
          options: { file: { type: 'string', short: 'f' }, 'dry-run': { type: 'boolean' }, prune: { type: 'boolean' } },
        });
        if (!values.file) return usage('apply needs -f FILE');
        return await apply(values.file, { dryRun: values['dry-run'] ?? false, prune: values.prune ?? false });
      }
      case 'mock-provider': {
        const { values } = parseArgs({
          args: argv.slice(1),
          options: {
            port: { type: 'string', default: '9090' }, host: { type: 'string', default: '127.0.0.1' },
            'latency-ms': { type: 'string' }, 'ttft-ms': { type: 'string' }, 'chunk-gap-ms': { type: 'string' },
            chunks: { type: 'string' }, status: { type: 'string' }, 'retry-after': { type: 'string' },
          },
        });
        const num = (v: string | undefined) => (v === undefined ? undefined : Number(v));
        const behaviour = Object.fromEntries(
          Object.entries({
            latencyMs: num(values['latency-ms']), ttftMs: num(values['ttft-ms']), chunkGapMs: num(values['chunk-gap-ms']),
            chunks: num(values.chunks), status: num(values.status), retryAfterSeconds: num(values['retry-after']),
          }).filter(([, v]) => v !== undefined),
        );
        await mockProvider({ port: Number(values.port), host: values.host!, behaviour });
        return -1;
      }
      case 'events': {
        if (sub === 'tail') {
          const { values } = parseArgs({
            args: rest,
            options: { from: { type: 'string', default: '0' }, follow: { type: 'boolean' }, type: { type: 'string', multiple: true } },
          });
          return await eventsTail({ from: Number(values.from), follow: values.follow ?? false, types: values.type ?? null });
        }
        if (sub === 'read' && rest[0]) return await eventsRead(rest[0]);
        return usage('events tail|read STREAM');
      }
      case 'projections':
        if (sub === 'status') return await projectionsStatus();
        if (sub === 'rebuild' && rest[0]) return await projectionsRebuild(rest[0]);
        return usage('projections status|rebuild NAME');
      case 'keys': {
        if (sub === 'issue') {
          const { values } = parseArgs({
            args: rest,
            options: {
              tenant: { type: 'string' }, id: { type: 'string' }, scope: { type: 'string', multiple: true },
              alias: { type: 'string', multiple: true }, 'expires-at': { type: 'string' },
              rpm: { type: 'string' }, tpm: { type: 'string' }, 'max-concurrency': { type: 'string' },
            },
          });
          if (!values.tenant) return usage('keys issue needs --tenant T');
          const limit = (value: string | undefined) => (value === undefined ? null : Number(value));
          const expiresAt = values['expires-at'] ? new Date(values['expires-at']) : null;
          if (expiresAt && Number.isNaN(expiresAt.getTime())) return usage('--expires-at must be an ISO-8601 timestamp');
          return await keysIssue({
            tenant: values.tenant,
            id: values.id ?? null,
            scopes: (values.scope ?? ['inference', 'models:read']) as KeyScope[],
            aliases: values.alias ?? [],
            expiresAt: expiresAt ? expiresAt.toISOString() : null,
            limits: { rpm: limit(values.rpm), tpm: limit(values.tpm), maxConcurrency: limit(values['max-concurrency']) },
          });
        }
        if (sub === 'revoke' && rest[0]) {
          const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { reason: { type: 'string' } } });
          return await keysRevoke(positionals[0], values.reason ?? null);
        }
        return usage('keys issue --tenant T | keys revoke ID');
      }
      case 'help':
      case '--help':
      case '-h':
        process.stdout.write(USAGE);
        return 0;
      default:
        return usage(`unknown command '${command}'`);
    }
  } catch (error) {
    if (error instanceof ConfigValidationError || error instanceof ApplyRefusedError || error instanceof ConfigurationError || error instanceof DomainError) {
      process.stderr.write(`${error.message}\n`);
      return 1;
    }
    process.stderr.write(`switchyard ${command ?? ''}: ${(error as Error).message}\n`);
    if (process.env.DEBUG) process.stderr.write(`${(error as Error).stack}\n`);
    return 1;
  }
}

function usage(problem: string): number {
  process.stderr.write(`switchyard: ${problem}\n\n${USAGE}`);
  return 2;
}
