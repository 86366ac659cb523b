import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { SERVING_ENVIRONMENT } from '../config/environment-settings.js';
import { textSetting } from '../kernel/settings.js';
import { parserOptions } from './cli-commands.js';
import { CLI_ENVIRONMENT } from './cli-environment.js';
import { cliCommandHelp, cliOverview } from './cli-help.js';
import type { KeyScope } from '../../events/api-key-events.js';
import type { ReconciledProvider } from './commands/reconcile.js';

/**
 * Runs one CLI command; resolves to the process exit code. Each command's module is imported when it runs,
 * and so is everything only some commands need (the framework's logger, the domain's error classes): loading
 * them all cost every command — `--version` and `--help` included — about a second of start-up.
 */
export async function runCli(argv: string[]): Promise<number> {
  const [command, sub, ...rest] = argv;
  if (command === undefined) {
    // A bare `switchyard` is someone asking what it does; serving is `switchyard serve` (`npm start`).
    process.stdout.write(cliOverview());
    return 0;
  }
  if (command === '--version' || command === '-V' || command === 'version') {
    process.stdout.write(`switchyard ${packageVersion()}\n`);
    return 0;
  }
  if (command !== 'help' && (argv.includes('--help') || argv.includes('-h'))) return help(argv.filter((arg) => !arg.startsWith('-')));
  // One-shot commands keep stdout for their result; the server configures its own logging.
  if (command !== 'serve' && command !== 'projector' && command !== 'consume' && command !== 'mock-provider' && command !== 'help' && command !== '--help' && command !== '-h') {
    // One import at a time, here and below: jest's ESM loader (the suites call runCli in-process) fails on
    // concurrent dynamic imports that share a dependency.
    const { Logger } = await import('@nestjs/common');
    const { StderrLogger } = await import('./stderr-logger.js');
    Logger.overrideLogger(new StderrLogger(textSetting(process.env, SERVING_ENVIRONMENT.LOG_LEVEL)));
  }
  try {
    switch (command) {
      case 'serve':
        await (await import('./commands/serve.js')).serve();
        return -1; // keep running
      case 'projector':
        await (await import('./commands/projector.js')).projector();
        return -1;
      case 'consume':
        if (!sub) return usage('consume NAME (clickhouse-analytics, webhooks)');
        await (await import('./commands/consume.js')).consume(sub);
        return -1;
      case 'apply': {
        const { values } = parseArgs({ args: argv.slice(1), options: parserOptions('apply') });
        if (!values.file) return usage('apply needs -f FILE');
        return await (await import('./commands/apply.js')).apply(values.file, {
          dryRun: values['dry-run'] ?? false, prune: values.prune ?? false, overwriteRuntimeEdits: values['overwrite-runtime-edits'] ?? false,
        });
      }
      case 'config': {
        if (sub === 'export') {
          const { values } = parseArgs({ args: rest, options: parserOptions('config export') });
          return await (await import('./commands/config-export.js')).configExport({ out: values.out ?? null });
        }
        return usage('config export [--out FILE]');
      }
      case 'mock-provider': {
        const { values } = parseArgs({ args: argv.slice(1), options: parserOptions('mock-provider') });
        const num = (v: string | undefined) => (v === undefined ? undefined : Number(v));
        const behaviour = Object.fromEntries(
          Object.entries({
            latencyMs: num(values['latency-ms']), ttftMs: num(values['ttft-ms']), chunkGapMs: num(values['chunk-gap-ms']),
            chunks: num(values.chunks), status: num(values.status), retryAfterSeconds: num(values['retry-after']),
          }).filter(([, v]) => v !== undefined),
        );
        await (await import('./commands/mock-provider.js')).mockProvider({ port: Number(values.port), host: values.host!, behaviour });
        return -1;
      }
      case 'events': {
        if (sub === 'tail') {
          const { values } = parseArgs({ args: rest, options: parserOptions('events tail') });
          return await (await import('./commands/events.js')).eventsTail({ from: Number(values.from), follow: values.follow ?? false, types: values.type ?? null, stream: values.stream ?? null });
        }
        if (sub === 'list') {
          const { values } = parseArgs({ args: rest, options: parserOptions('events list') });
          const limit = Number(values.limit);
          if (!Number.isInteger(limit) || limit < 1 || limit > 1000) return usage('--limit must be an integer from 1 to 1000');
          return await (await import('./commands/events.js')).eventsList({ after: values.after, stream: values.stream, types: values.type, limit });
        }
        if (sub === 'read' && rest[0]) return await (await import('./commands/events.js')).eventsRead(rest[0]);
        return usage('events tail|list|read STREAM');
      }
      case 'requests': {
        if (sub === 'show' && rest[0]) return await (await import('./commands/requests.js')).requestsShow(rest[0]);
        if (sub === 'list') {
          const { values } = parseArgs({ args: rest, options: parserOptions('requests list') });
          const requests = await import('./commands/requests.js');
          const options = requests.requestListOptions(values);
          if (typeof options === 'string') return usage(options);
          return await requests.requestsList(options);
        }
        return usage('requests show ID | requests list [--tenant T] [--key K] [--alias A] [--status S] [--from TIME] [--to TIME] [--limit N] [--page-token TOKEN]');
      }
      case 'projections':
        if (sub === 'status') {
          const { values } = parseArgs({ args: rest, options: parserOptions('projections status') });
          return await (await import('./commands/projections.js')).projectionsStatus({ json: values.json ?? false });
        }
        if (sub === 'rebuild' && rest[0]) return await (await import('./commands/projections.js')).projectionsRebuild(rest[0]);
        if (sub === 'resume' && rest[0]) return await (await import('./commands/projections.js')).projectionsResume(rest[0]);
        return usage('projections status|rebuild NAME|resume NAME');
      case 'audit': {
        if (sub === 'verify') {
          const { values } = parseArgs({ args: rest, options: parserOptions('audit verify') });
          return await (await import('./commands/audit.js')).auditVerify({
            checkpointFile: values.checkpoint ?? null, publicKeyFile: values['public-key'] ?? null, sinceCheckpoint: values['since-checkpoint'] ?? false, json: values.json ?? false,
          });
        }
        if (sub === 'export') {
          const { values } = parseArgs({ args: rest, options: parserOptions('audit export') });
          const position = (value: string | undefined) => (value === undefined ? undefined : Number(value));
          for (const [name, value] of [['--from', values.from], ['--to', values.to]] as const) {
            if (value !== undefined && !/^\d+$/.test(value)) return usage(`${name} must be a global position`);
          }
          return await (await import('./commands/audit.js')).auditExport({ from: position(values.from), to: position(values.to), out: values.out ?? null });
        }
        if (sub === 'checkpoint') return await (await import('./commands/audit.js')).auditCheckpoint();
        if (sub === 'public-key') return await (await import('./commands/audit.js')).auditPublicKey();
        if (sub === 'log') {
          const { values } = parseArgs({ args: rest, options: parserOptions('audit log') });
          const date = (value: string | undefined) => (value === undefined ? undefined : new Date(value));
          const from = date(values.from);
          const to = date(values.to);
          if ((from && Number.isNaN(from.getTime())) || (to && Number.isNaN(to.getTime()))) return usage('--from and --to must be ISO-8601 timestamps');
          const limit = Number(values.limit);
          if (!Number.isInteger(limit) || limit < 1) return usage('--limit must be a positive integer');
          return await (await import('./commands/audit.js')).auditLog({ actor: values.actor, actions: values.action?.flatMap((a) => a.split(',')), from, to, limit });
        }
        return usage('audit verify|export|checkpoint|public-key|log');
      }
      case 'reconcile': {
        const { values } = parseArgs({ args: argv.slice(1), options: parserOptions('reconcile') });
        if (values.provider !== 'openai' && values.provider !== 'anthropic') return usage('reconcile needs --provider openai|anthropic');
        if (!values.usage?.length) return usage('reconcile needs --usage FILE (a usage and/or cost export)');
        if (!/^\d+(\.\d+)?$/.test(values.tolerance!)) return usage('--tolerance must be a non-negative amount in USD, e.g. 0.01');
        return await (await import('./commands/reconcile.js')).reconcileCommand({
          provider: values.provider as ReconciledProvider, usageFiles: values.usage, providerIds: values['provider-id'] ?? [],
          toleranceUsd: values.tolerance!, json: values.json ?? false,
        });
      }
      case 'content-policies': {
        if (sub === 'list') {
          const { values } = parseArgs({ args: rest, options: parserOptions('content-policies list') });
          return await (await import('./commands/content-policies.js')).contentPoliciesList({ all: values.all ?? false, json: values.json ?? false });
        }
        if (sub === 'show' && rest[0]) {
          const { positionals } = parseArgs({ args: rest, allowPositionals: true, options: parserOptions('content-policies show') });
          return await (await import('./commands/content-policies.js')).contentPoliciesShow(positionals[0]);
        }
        return usage('content-policies list [--all] [--json] | content-policies show ID');
      }
      case 'keys': {
        if (sub === 'issue') {
          const { values } = parseArgs({ args: rest, options: parserOptions('keys issue') });
          if (!values.tenant) return usage('keys issue needs --tenant T');
          const limit = (value: string | undefined) => (value === undefined ? null : Number(value));
          const expiresAt = values['expires-at'] ? new Date(values['expires-at']) : null;
          if (expiresAt && Number.isNaN(expiresAt.getTime())) return usage('--expires-at must be an ISO-8601 timestamp');
          const { KEY_SCOPES } = await import('../../events/api-key-events.js');
          const { DEFAULT_KEY_SCOPES } = await import('../../modules/access/index.js');
          const unknownScopes = (values.scope ?? []).filter((scope) => !(KEY_SCOPES as readonly string[]).includes(scope));
          if (unknownScopes.length) return usage(`unknown scope ${unknownScopes.map((s) => `'${s}'`).join(', ')} (known: ${KEY_SCOPES.join(', ')})`);
          return await (await import('./commands/keys.js')).keysIssue({
            tenant: values.tenant,
            id: values.id ?? null,
            scopes: (values.scope ?? [...DEFAULT_KEY_SCOPES]) as KeyScope[],
            aliases: values.alias ?? [],
            expiresAt: expiresAt ? expiresAt.toISOString() : null,
            limits: { rpm: limit(values.rpm), tpm: limit(values.tpm), maxConcurrency: limit(values['max-concurrency']) },
          });
        }
        if (sub === 'revoke' && rest[0]) {
          const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: parserOptions('keys revoke') });
          return await (await import('./commands/keys.js')).keysRevoke(positionals[0], values.reason ?? null);
        }
        if (sub === 'rotate' && rest[0]) {
          const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: parserOptions('keys rotate') });
          const overlap = Number(values.overlap);
          if (!Number.isInteger(overlap) || overlap < 0 || overlap > 2_592_000) return usage('--overlap must be a number of seconds from 0 to 2592000 (30 days)');
          return await (await import('./commands/keys.js')).keysRotate(positionals[0], overlap);
        }
        return usage('keys issue --tenant T | keys revoke ID | keys rotate ID [--overlap SECONDS]');
      }
      case 'spend': {
        const spend = await import('./commands/spend.js');
        const options = spend.spendOptions(argv.slice(1));
        if (typeof options === 'string') return usage(options);
        return await spend.spendCommand(options);
      }
      case 'prices': {
        if (sub === 'import') {
          const prices = await import('./commands/prices.js');
          const options = prices.pricesImportOptions(rest);
          if (typeof options === 'string') return usage(options);
          return await prices.pricesImport(options);
        }
        return usage('prices import FILE [--dry-run] [--effective-from ISO]');
      }
      case 'migrate': {
        const { values } = parseArgs({ args: argv.slice(1), options: parserOptions('migrate') });
        if (!values.to === !values['to-data-dir']) return usage('migrate needs --to postgres://… or --to-data-dir PATH');
        if (values.to && !/^postgres(ql)?:\/\//.test(values.to)) return usage('--to must be a PostgreSQL URL (postgres://…); an embedded target is --to-data-dir PATH');
        const target = values.to ? { kind: 'postgres' as const, url: values.to } : { kind: 'pglite' as const, dataDir: values['to-data-dir']! };
        return await (await import('./commands/migrate.js')).migrateCommand({ target, json: values.json ?? false });
      }
      case 'admin-token':
        if (sub === 'reset' && rest.length === 0) return await (await import('./commands/admin-token.js')).adminTokenReset();
        return usage('admin-token reset');
      case 'help':
      case '--help':
      case '-h':
        process.stdout.write(cliOverview());
        return 0;
      default:
        return usage(`unknown command '${command}'`);
    }
  } catch (error) {
    if (await explainsItself(error)) {
      process.stderr.write(`${(error as Error).message}\n`);
      return 1;
    }
    process.stderr.write(`switchyard ${command ?? ''}: ${(error as Error).message}\n`);
    if (textSetting(process.env, CLI_ENVIRONMENT.DEBUG)) process.stderr.write(`${(error as Error).stack}\n`);
    return 1;
  }
}

/**
 * Errors whose message is the whole story for an operator (a refused file, a bad setting, a rule of the domain):
 * printed as they are, without the command prefix or a stack. Their classes are loaded here, on the error path,
 * rather than by every command at start-up (a command that threw one has loaded its module already).
 */
async function explainsItself(error: unknown): Promise<boolean> {
  const kinds = [
    (await import('../config/gateway-config.js')).ConfigValidationError, (await import('../config/apply/config-applier.js')).ApplyRefusedError,
    (await import('../config/environment.js')).ConfigurationError, (await import('../kernel/commands/decider.js')).DomainError,
    (await import('../../modules/audit/audit-export.js')).ExportRangeError, (await import('../../modules/audit/control-plane-audit.js')).UnknownActionError,
    (await import('./running-server.js')).ServerRefusedError,
  ];
  return kinds.some((kind) => error instanceof kind);
}

/** The version in package.json, which a release carries beside dist/ (the Dockerfile and the install steps copy it). */
function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  return manifest.version;
}

/** `switchyard <command> [sub] --help`: that command's entries with their flags, from the same table as the overview. */
function help(words: string[]): number {
  const text = cliCommandHelp(words);
  if (text === null) return usage(`unknown command '${words.join(' ')}'`);
  process.stdout.write(text);
  return 0;
}

function usage(problem: string): number {
  process.stderr.write(`switchyard: ${problem}\n\n${cliOverview()}`);
  return 2;
}
