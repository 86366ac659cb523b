import { Logger } from '@nestjs/common';
import { parseArgs } from 'node:util';
import { ConfigValidationError } from '../config/gateway-config.js';
import { ApplyRefusedError } from '../config/apply/config-applier.js';
import { ConfigurationError } from '../config/environment.js';
import { SERVING_ENVIRONMENT } from '../config/environment-settings.js';
import { textSetting } from '../kernel/settings.js';
import { CLI_ENVIRONMENT } from './cli-environment.js';
import { KEY_SCOPES, type KeyScope } from '../../events/api-key-events.js';
import { DEFAULT_KEY_SCOPES } from '../../modules/access/index.js';
import { DomainError } from '../kernel/commands/decider.js';
import { ExportRangeError } from '../../modules/audit/audit-export.js';
import { UnknownActionError } from '../../modules/audit/control-plane-audit.js';
import { adminTokenReset } from './commands/admin-token.js';
import { apply } from './commands/apply.js';
import { keysIssue, keysRevoke, keysRotate } from './commands/keys.js';
import { spendCommand } from './commands/spend.js';
import { auditCheckpoint, auditExport, auditLog, auditPublicKey, auditVerify } from './commands/audit.js';
import { eventsList, eventsRead, eventsTail } from './commands/events.js';
import { mockProvider } from './commands/mock-provider.js';
import { projectionsRebuild, projectionsResume, projectionsStatus } from './commands/projections.js';
import { projector } from './commands/projector.js';
import { type ReconciledProvider, reconcileCommand } from './commands/reconcile.js';
import { requestsShow } from './commands/requests.js';
import { serve } from './commands/serve.js';
import { ServerRefusedError } from './running-server.js';
import { StderrLogger } from './stderr-logger.js';

const USAGE = `Usage: switchyard <command>

  serve                              run the gateway (PORT, HOST, SWITCHYARD_CONFIG, DATABASE_URL, SWITCHYARD_WORKERS, …)
  projector                          run the durable projections only (next to nodes with SWITCHYARD_PROJECTOR=external)
  apply -f FILE [--dry-run] [--prune]
                                     make the event store match a configuration file
  mock-provider [--port N] [--host H] [--latency-ms N] [--ttft-ms N] [--chunk-gap-ms N] [--chunks N]
                [--status N] [--retry-after S]
                                     run the mock provider (OpenAI-compatible, with fault injection)
  events tail [--from N] [--follow] [--type T ...] [--stream S]
                                     print the global event log as JSON lines
  events list [--after N|TOKEN] [--stream S] [--type T ...] [--limit N]
                                     one page of the log by position (next page token on stderr)
  events read STREAM                 print one stream (e.g. request-<id>, alias-chat)
  requests show ID                   reconstruct one request: admission, attempts, completion, cost,
                                     alias and price versions in force
  projections status [--json]        position and lag of every projection; a halted one with the event
                                     and the error it halted at
  projections rebuild NAME           replay a durable projection from position 0 aside (cost-ledger,
                                     audit-chain, clickhouse-analytics), with a progress bar, and swap
                                     it in at the head; a replay that fails leaves the live one as it was
  projections resume NAME            try a halted durable projection's event again (after fixing the
                                     cause): exit 0 once past it, 1 if it halted again
  audit verify [--checkpoint FILE] [--public-key FILE] [--json]
                                     recompute the hash chain from the events table: OK, or the first
                                     altered, missing or reordered position (exit 1)
  audit export [--from N] [--to N] [--out FILE]
                                     NDJSON of the chain with hashes and signed checkpoints
  audit checkpoint                   the latest signed checkpoint as JSON (keep it outside the database)
  audit public-key                   the Ed25519 public key auditors verify checkpoints with
  audit log [--actor A] [--action TYPE ...] [--from ISO] [--to ISO] [--limit N]
                                     control-plane changes with their actors, as JSON lines
  reconcile --provider openai|anthropic --usage FILE [--usage FILE ...] [--provider-id ID ...]
            [--tolerance USD] [--json]
                                     compare the ledger with a provider's usage/cost export per day
                                     and model (exit 1 when anything differs)
  keys issue --tenant T [--id ID] [--scope S ...] [--alias A ...] [--expires-at ISO]
             [--rpm N] [--tpm N] [--max-concurrency N]
                                     issue a gateway key; prints it once on stdout. Scopes: inference,
                                     models:read, usage:read, admin (the admin API of its own tenant),
                                     admin:platform (the whole admin API); default inference, models:read
  keys revoke ID [--reason TEXT]     revoke a key (every node refuses it within a second)
  keys rotate ID [--overlap SECONDS] a new secret for the same key, printed once; the previous one
                                     keeps working for the overlap (default 0: it stops now)
  spend --tenant T | --key K [--period day|month] [--from ISO] [--to ISO] [--json]
                                     spend by period (default: the last twelve months)
  admin-token reset                  with every server stopped: revoke the stored admin tokens, issue a
                                     new one and print it once (recovers a token that was never shown)
`;

/** Runs one CLI command; resolves to the process exit code. */
export async function runCli(argv: string[]): Promise<number> {
  const [command, sub, ...rest] = argv;
  if (command !== undefined && command !== 'help' && (argv.includes('--help') || argv.includes('-h'))) return help(argv.filter((arg) => !arg.startsWith('-')));
  // One-shot commands keep stdout for their result; the server configures its own logging.
  if (command !== undefined && command !== 'serve' && command !== 'projector' && command !== 'mock-provider') Logger.overrideLogger(new StderrLogger(textSetting(process.env, SERVING_ENVIRONMENT.LOG_LEVEL)));
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
            options: {
              from: { type: 'string', default: '0' }, follow: { type: 'boolean' }, type: { type: 'string', multiple: true }, stream: { type: 'string' },
            },
          });
          return await eventsTail({ from: Number(values.from), follow: values.follow ?? false, types: values.type ?? null, stream: values.stream ?? null });
        }
        if (sub === 'list') {
          const { values } = parseArgs({
            args: rest,
            options: { after: { type: 'string' }, stream: { type: 'string' }, type: { type: 'string', multiple: true }, limit: { type: 'string', default: '100' } },
          });
          const limit = Number(values.limit);
          if (!Number.isInteger(limit) || limit < 1 || limit > 1000) return usage('--limit must be an integer from 1 to 1000');
          return await eventsList({ after: values.after, stream: values.stream, types: values.type, limit });
        }
        if (sub === 'read' && rest[0]) return await eventsRead(rest[0]);
        return usage('events tail|list|read STREAM');
      }
      case 'requests':
        if (sub === 'show' && rest[0]) return await requestsShow(rest[0]);
        return usage('requests show ID');
      case 'projections':
        if (sub === 'status') {
          const { values } = parseArgs({ args: rest, options: { json: { type: 'boolean' } } });
          return await projectionsStatus({ json: values.json ?? false });
        }
        if (sub === 'rebuild' && rest[0]) return await projectionsRebuild(rest[0]);
        if (sub === 'resume' && rest[0]) return await projectionsResume(rest[0]);
        return usage('projections status|rebuild NAME|resume NAME');
      case 'audit': {
        if (sub === 'verify') {
          const { values } = parseArgs({ args: rest, options: { checkpoint: { type: 'string' }, 'public-key': { type: 'string' }, json: { type: 'boolean' } } });
          return await auditVerify({ checkpointFile: values.checkpoint ?? null, publicKeyFile: values['public-key'] ?? null, json: values.json ?? false });
        }
        if (sub === 'export') {
          const { values } = parseArgs({ args: rest, options: { from: { type: 'string' }, to: { type: 'string' }, out: { type: 'string' } } });
          const position = (value: string | undefined) => (value === undefined ? undefined : Number(value));
          for (const [name, value] of [['--from', values.from], ['--to', values.to]] as const) {
            if (value !== undefined && !/^\d+$/.test(value)) return usage(`${name} must be a global position`);
          }
          return await auditExport({ from: position(values.from), to: position(values.to), out: values.out ?? null });
        }
        if (sub === 'checkpoint') return await auditCheckpoint();
        if (sub === 'public-key') return await auditPublicKey();
        if (sub === 'log') {
          const { values } = parseArgs({
            args: rest,
            options: { actor: { type: 'string' }, action: { type: 'string', multiple: true }, from: { type: 'string' }, to: { type: 'string' }, limit: { type: 'string', default: '1000' } },
          });
          const date = (value: string | undefined) => (value === undefined ? undefined : new Date(value));
          const from = date(values.from);
          const to = date(values.to);
          if ((from && Number.isNaN(from.getTime())) || (to && Number.isNaN(to.getTime()))) return usage('--from and --to must be ISO-8601 timestamps');
          const limit = Number(values.limit);
          if (!Number.isInteger(limit) || limit < 1) return usage('--limit must be a positive integer');
          return await auditLog({ actor: values.actor, actions: values.action?.flatMap((a) => a.split(',')), from, to, limit });
        }
        return usage('audit verify|export|checkpoint|public-key|log');
      }
      case 'reconcile': {
        const { values } = parseArgs({
          args: argv.slice(1),
          options: {
            provider: { type: 'string' }, usage: { type: 'string', multiple: true }, 'provider-id': { type: 'string', multiple: true },
            tolerance: { type: 'string', default: '0.01' }, json: { type: 'boolean' },
          },
        });
        if (values.provider !== 'openai' && values.provider !== 'anthropic') return usage('reconcile needs --provider openai|anthropic');
        if (!values.usage?.length) return usage('reconcile needs --usage FILE (a usage and/or cost export)');
        if (!/^\d+(\.\d+)?$/.test(values.tolerance!)) return usage('--tolerance must be a non-negative amount in USD, e.g. 0.01');
        return await reconcileCommand({
          provider: values.provider as ReconciledProvider, usageFiles: values.usage, providerIds: values['provider-id'] ?? [],
          toleranceUsd: values.tolerance!, json: values.json ?? false,
        });
      }
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
          const unknownScopes = (values.scope ?? []).filter((scope) => !(KEY_SCOPES as readonly string[]).includes(scope));
          if (unknownScopes.length) return usage(`unknown scope ${unknownScopes.map((s) => `'${s}'`).join(', ')} (known: ${KEY_SCOPES.join(', ')})`);
          return await keysIssue({
            tenant: values.tenant,
            id: values.id ?? null,
            scopes: (values.scope ?? [...DEFAULT_KEY_SCOPES]) as KeyScope[],
            aliases: values.alias ?? [],
            expiresAt: expiresAt ? expiresAt.toISOString() : null,
            limits: { rpm: limit(values.rpm), tpm: limit(values.tpm), maxConcurrency: limit(values['max-concurrency']) },
          });
        }
        if (sub === 'revoke' && rest[0]) {
          const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { reason: { type: 'string' } } });
          return await keysRevoke(positionals[0], values.reason ?? null);
        }
        if (sub === 'rotate' && rest[0]) {
          const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { overlap: { type: 'string', default: '0' } } });
          const overlap = Number(values.overlap);
          if (!Number.isInteger(overlap) || overlap < 0 || overlap > 2_592_000) return usage('--overlap must be a number of seconds from 0 to 2592000 (30 days)');
          return await keysRotate(positionals[0], overlap);
        }
        return usage('keys issue --tenant T | keys revoke ID | keys rotate ID [--overlap SECONDS]');
      }
      case 'spend': {
        const { values } = parseArgs({
          args: argv.slice(1),
          options: {
            tenant: { type: 'string' }, key: { type: 'string' }, period: { type: 'string', default: 'month' },
            from: { type: 'string' }, to: { type: 'string' }, json: { type: 'boolean' },
          },
        });
        if (!values.tenant === !values.key) return usage('spend needs --tenant T or --key K');
        if (values.period !== 'day' && values.period !== 'month') return usage('--period must be day or month');
        const date = (value: string | undefined) => (value === undefined ? null : new Date(value));
        const [from, to] = [date(values.from), date(values.to)];
        if ((from && Number.isNaN(from.getTime())) || (to && Number.isNaN(to.getTime()))) return usage('--from and --to must be ISO-8601 timestamps');
        return await spendCommand({
          kind: values.tenant ? 'tenant' : 'key', id: (values.tenant ?? values.key)!, period: values.period, from, to, json: values.json ?? false,
        });
      }
      case 'admin-token':
        if (sub === 'reset' && rest.length === 0) return await adminTokenReset();
        return usage('admin-token reset');
      case 'help':
      case '--help':
      case '-h':
        process.stdout.write(USAGE);
        return 0;
      default:
        return usage(`unknown command '${command}'`);
    }
  } catch (error) {
    if (error instanceof ConfigValidationError || error instanceof ApplyRefusedError || error instanceof ConfigurationError || error instanceof DomainError ||
        error instanceof ExportRangeError || error instanceof UnknownActionError || error instanceof ServerRefusedError) {
      process.stderr.write(`${error.message}\n`);
      return 1;
    }
    process.stderr.write(`switchyard ${command ?? ''}: ${(error as Error).message}\n`);
    if (textSetting(process.env, CLI_ENVIRONMENT.DEBUG)) process.stderr.write(`${(error as Error).stack}\n`);
    return 1;
  }
}

/**
 * `switchyard <command> [sub] --help`: the usage entries of that command (of the subcommand when one is
 * named), from the same text as the overview, so the two never disagree.
 */
function help(words: string[]): number {
  const entries = usageEntries().filter((entry) => words.every((word, index) => entry.words[index] === word));
  const chosen = entries.length > 0 ? entries : usageEntries().filter((entry) => entry.words[0] === words[0]);
  if (chosen.length === 0) return usage(`unknown command '${words.join(' ')}'`);
  process.stdout.write(`Usage: switchyard …\n\n${chosen.map((entry) => entry.text).join('')}`);
  return 0;
}

/** The overview split into entries: a line indented by two spaces starts one; deeper lines continue it. */
function usageEntries(): Array<{ words: string[]; text: string }> {
  const entries: Array<{ words: string[]; text: string }> = [];
  for (const line of USAGE.split('\n').slice(2)) {
    if (/^ {2}\S/.test(line)) entries.push({ words: line.trim().split(/\s+/).filter((word) => /^[a-z][a-z-]*$/.test(word)).slice(0, 2), text: `${line}\n` });
    else if (line.trim() && entries.length) entries[entries.length - 1].text += `${line}\n`;
  }
  // An entry's words are its command and, when the second word is a subcommand (not a placeholder), that subcommand.
  return entries.map((entry) => ({ ...entry, words: entry.words.filter((word, index) => index === 0 || !/^[A-Z]/.test(word)) }));
}

function usage(problem: string): number {
  process.stderr.write(`switchyard: ${problem}\n\n${USAGE}`);
  return 2;
}
