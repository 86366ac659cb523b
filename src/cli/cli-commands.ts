/**
 * The CLI's commands, their flags and what they do: one table that `switchyard help` and `--help` print,
 * that the dispatcher (run-cli.ts) builds its argument parsers from, and that docs/reference/cli.md is
 * rendered from. A flag the parser accepts is therefore always one the help and the reference name.
 */
export interface CliFlag {
  /** The long name, without `--`. */
  readonly name: string;
  /** A one-letter alias, without `-`. */
  readonly short?: string;
  /** The value's placeholder (`FILE`, `N`); absent = a switch that takes no value. */
  readonly value?: string;
  /** May be given more than once; each value is collected. */
  readonly multiple?: boolean;
  /** The command refuses to run without it. */
  readonly required?: boolean;
  /** Flags of one group are alternatives: exactly one of them is given (`--tenant T | --key K`). */
  readonly group?: string;
  /** The value when the flag is left out (what the parser fills in). */
  readonly default?: string;
  readonly meaning: string;
}

export interface CliCommand {
  /** Positional arguments after the command's words (`STREAM`, `ID`, `NAME`). */
  readonly arguments?: string;
  readonly flags: readonly CliFlag[];
  readonly description: string;
  /** Runs until stopped (a server), rather than once. */
  readonly serving?: boolean;
}

const JSON_OUTPUT = { name: 'json', meaning: 'print the result as JSON' } as const;

/** Keyed by the command's words (`events tail`), in the order the help lists them. */
export const CLI_COMMANDS = {
  serve: {
    flags: [],
    serving: true,
    description: 'run the gateway (PORT, HOST, SWITCHYARD_CONFIG, DATABASE_URL, SWITCHYARD_WORKERS, …); `npm start` runs this',
  },
  projector: {
    flags: [],
    serving: true,
    description: 'run the durable projections only (next to nodes with SWITCHYARD_PROJECTOR=external)',
  },
  consume: {
    arguments: 'NAME',
    flags: [],
    serving: true,
    description:
      'consume the relayed log from SWITCHYARD_RELAY_URL (NATS JetStream or RabbitMQ): `clickhouse-analytics` writes the ClickHouse analytics rows ' +
      '(CLICKHOUSE_URL; serve with SWITCHYARD_ANALYTICS_FEED=broker), exactly once by event id; `webhooks` POSTs selected events, signed, to SWITCHYARD_WEBHOOK_URLS ' +
      'with retries and a dead letter; processes of one SWITCHYARD_CONSUME_GROUP share the work',
  },
  apply: {
    flags: [
      { name: 'file', short: 'f', value: 'FILE', required: true, meaning: 'the configuration file, YAML' },
      { name: 'dry-run', meaning: 'print the plan (and any drift) without appending anything' },
      { name: 'prune', meaning: 'also stop what the file no longer declares: revoke its keys, retire its aliases and deployments, remove its providers, suspend its tenants' },
      {
        name: 'overwrite-runtime-edits',
        meaning: "apply the file's values over settings changed at runtime (admin API, CLI), which are otherwise kept and reported as drift; lifecycle (revoked, suspended, disabled) stays as it is",
      },
    ],
    description: 'make the event store match a configuration file; settings changed at runtime are kept and reported field by field',
  },
  'config export': {
    flags: [{ name: 'out', value: 'FILE', meaning: 'write to this file instead of stdout' }],
    description: 'the running definitions as a configuration file (secrets as their references; keys as their stored sha256: hash) to commit and apply with no changes',
  },
  'mock-provider': {
    flags: [
      { name: 'port', value: 'N', default: '9090', meaning: 'the port to listen on' },
      { name: 'host', value: 'H', default: '127.0.0.1', meaning: 'the address to bind' },
      { name: 'latency-ms', value: 'N', meaning: 'buffered answers: delay before the answer; streams: before the headers' },
      { name: 'ttft-ms', value: 'N', meaning: 'streams: delay between the headers and the first content chunk' },
      { name: 'chunk-gap-ms', value: 'N', meaning: 'streams: delay between content chunks' },
      { name: 'chunks', value: 'N', meaning: 'content pieces per answer (also the completion tokens reported)' },
      { name: 'status', value: 'N', meaning: 'answer every request with this HTTP error status (e.g. 500, 503, 429)' },
      { name: 'retry-after', value: 'S', meaning: 'with `--status`: the `retry-after` seconds to send' },
    ],
    serving: true,
    description: 'run the mock provider (OpenAI-compatible, with fault injection)',
  },
  'events tail': {
    flags: [
      { name: 'from', value: 'N', default: '0', meaning: 'the first global position printed' },
      { name: 'follow', meaning: 'keep printing new events as they are committed' },
      { name: 'type', value: 'T', multiple: true, meaning: 'only events of this type' },
      { name: 'stream', value: 'S', meaning: 'only events of this stream' },
    ],
    description: 'print the global event log as JSON lines',
  },
  'events list': {
    flags: [
      { name: 'after', value: 'N|TOKEN', meaning: 'a global position, or the page token the previous page printed' },
      { name: 'stream', value: 'S', meaning: 'only events of this stream' },
      { name: 'type', value: 'T', multiple: true, meaning: 'only events of this type' },
      { name: 'limit', value: 'N', default: '100', meaning: 'events on the page, from 1 to 1000' },
    ],
    description: 'one page of the log by position (next page token on stderr)',
  },
  'events read': {
    arguments: 'STREAM',
    flags: [],
    description: 'print one stream (e.g. `request-<id>`, `alias-chat`)',
  },
  'requests show': {
    arguments: 'ID',
    flags: [],
    description: 'reconstruct one request: admission, attempts, completion, cost, alias and price versions in force',
  },
  'requests list': {
    flags: [
      { name: 'tenant', value: 'T', meaning: 'only requests of this tenant' },
      { name: 'key', value: 'K', meaning: 'only requests sent with this key id' },
      { name: 'alias', value: 'A', meaning: 'only requests for this alias' },
      { name: 'status', value: 'S', meaning: 'only requests that ended so: success, failed, cancelled, rejected, incomplete' },
      { name: 'from', value: 'TIME', meaning: 'only requests at or after this time (ISO 8601)' },
      { name: 'to', value: 'TIME', meaning: 'only requests before this time (ISO 8601)' },
      { name: 'limit', value: 'N', default: '50', meaning: 'requests on the page, from 1 to 200' },
      { name: 'page-token', value: 'TOKEN', meaning: 'the page token the previous page printed' },
    ],
    description: 'one page of requests, newest first, as JSON lines (next page token on stderr); read from the request-summaries projection',
  },
  'projections status': {
    flags: [JSON_OUTPUT],
    description: 'position and lag of every projection; a halted one with the event and the error it halted at',
  },
  'projections rebuild': {
    arguments: 'NAME',
    flags: [],
    description:
      'replay a durable projection from position 0 aside (cost-ledger, request-summaries, audit-chain, clickhouse-analytics), with a progress bar, and swap it in at the head; ' +
      'a replay that fails leaves the live one as it was',
  },
  'projections resume': {
    arguments: 'NAME',
    flags: [],
    description: "try a halted durable projection's event again (after fixing the cause): exit 0 once past it, 1 if it halted again",
  },
  'audit verify': {
    flags: [
      { name: 'checkpoint', value: 'FILE', meaning: 'also check the chain against a signed checkpoint kept outside the database' },
      { name: 'public-key', value: 'FILE', meaning: "the Ed25519 public key (PEM) the checkpoint's signature is verified with" },
      { name: 'since-checkpoint', meaning: 'recompute only what came after the newest signed checkpoint (its signature, chain entry and event checked): quick on a long log, blind to changes before it' },
      JSON_OUTPUT,
    ],
    description: 'recompute the hash chain from the events table: OK, or the first altered, missing or reordered position (exit 1)',
  },
  'audit export': {
    flags: [
      { name: 'from', value: 'N', meaning: 'the first global position' },
      { name: 'to', value: 'N', meaning: 'the last global position' },
      { name: 'out', value: 'FILE', meaning: 'write to this file instead of stdout' },
    ],
    description: 'NDJSON of the chain with hashes and signed checkpoints',
  },
  'audit checkpoint': {
    flags: [],
    description: 'the latest signed checkpoint as JSON (keep it outside the database)',
  },
  'audit public-key': {
    flags: [],
    description: 'the Ed25519 public key auditors verify checkpoints with',
  },
  'audit log': {
    flags: [
      { name: 'actor', value: 'A', meaning: 'only changes made by this actor' },
      { name: 'action', value: 'TYPE', multiple: true, meaning: 'only these event types (also comma-separated)' },
      { name: 'from', value: 'ISO', meaning: 'only changes at or after this time' },
      { name: 'to', value: 'ISO', meaning: 'only changes before this time' },
      { name: 'limit', value: 'N', default: '1000', meaning: 'the most entries printed' },
    ],
    description: 'control-plane changes with their actors, as JSON lines',
  },
  reconcile: {
    flags: [
      { name: 'provider', value: 'openai|anthropic', required: true, meaning: 'whose export the files are' },
      { name: 'usage', value: 'FILE', multiple: true, required: true, meaning: "the provider's usage and/or cost export" },
      { name: 'provider-id', value: 'ID', multiple: true, meaning: "the ledger's provider(s) the export belongs to (default: every provider of that type)" },
      { name: 'tolerance', value: 'USD', default: '0.01', meaning: 'the cost difference per line still counted as a match' },
      JSON_OUTPUT,
    ],
    description: "compare the ledger with a provider's usage/cost export per day and model (exit 1 when anything differs)",
  },
  'content-policies list': {
    flags: [{ name: 'all', meaning: 'retired policies too' }, JSON_OUTPUT],
    description: 'the content policies: id, version, status and the tenants, keys and aliases each is attached to (change them with `apply -f` or the admin API)',
  },
  'content-policies show': {
    arguments: 'ID',
    flags: [],
    description: 'one content policy as JSON: its definition, version and attachments',
  },
  'keys issue': {
    flags: [
      { name: 'tenant', value: 'T', required: true, meaning: 'the tenant the key belongs to' },
      { name: 'id', value: 'ID', meaning: "the key's id (default: generated)" },
      { name: 'scope', value: 'S', multiple: true, meaning: 'a scope: inference, models:read, usage:read, admin (the admin API of its own tenant), admin:platform (the whole admin API); default inference, models:read' },
      { name: 'alias', value: 'A', multiple: true, meaning: 'an alias the key may call (default: every public alias)' },
      { name: 'expires-at', value: 'ISO', meaning: 'when the key stops working' },
      { name: 'rpm', value: 'N', meaning: 'requests per minute' },
      { name: 'tpm', value: 'N', meaning: 'tokens per minute' },
      { name: 'max-concurrency', value: 'N', meaning: 'requests in flight at once' },
    ],
    description: 'issue a gateway key; prints it once on stdout',
  },
  'keys revoke': {
    arguments: 'ID',
    flags: [{ name: 'reason', value: 'TEXT', meaning: 'recorded with the revocation' }],
    description: 'revoke a key (every node refuses it within a second)',
  },
  'keys rotate': {
    arguments: 'ID',
    flags: [{ name: 'overlap', value: 'SECONDS', default: '0', meaning: 'how long the previous secret keeps working, up to 2592000 (30 days); 0: it stops now' }],
    description: 'a new secret for the same key, printed once; the previous one keeps working for the overlap',
  },
  spend: {
    flags: [
      { name: 'tenant', value: 'T', meaning: "only this tenant's spend" },
      { name: 'key', value: 'K', meaning: "only this key's spend" },
      { name: 'group-by', value: 'DIMS', meaning: 'comma-separated: tenant, model, alias (also key, deployment, provider); default: one line per period' },
      { name: 'granularity', value: 'day|week|month', default: 'month', meaning: 'the period of each line: a UTC day, an ISO week (from Monday), a calendar month (replaces --period)' },
      { name: 'from', value: 'ISO', meaning: 'the first period, on its boundary (with --to; default: the current month so far)' },
      { name: 'to', value: 'ISO', meaning: 'the end of the last period, exclusive, on a boundary' },
      { name: 'format', value: 'table|csv|json', default: 'table', meaning: 'aligned columns with a total row, RFC 4180 CSV with a header, or the analytics API\'s JSON document (replaces --json)' },
    ],
    description: 'spend by period and group from the ledger (or ClickHouse), exact to 12 decimals; says the range it covers',
  },
  'prices import': {
    arguments: 'FILE',
    flags: [
      { name: 'dry-run', meaning: 'print per deployment the current price → the new one, "unchanged" or "no entry in the map", and append nothing' },
      { name: 'effective-from', value: 'ISO', meaning: 'when the imported prices start (default: now)' },
      { name: 'verbose', meaning: "also list the map's entries that match no deployment (otherwise counted)" },
      JSON_OUTPUT,
    ],
    description: "schedule prices from a LiteLLM model price map (model_prices_and_context_window.json) for the deployments it matches by model and provider type; never removes a price",
  },
  migrate: {
    flags: [
      { name: 'to', value: 'URL', group: 'target', meaning: 'an empty PostgreSQL database (postgres://…) to move the store into' },
      { name: 'to-data-dir', value: 'PATH', group: 'target', meaning: 'a new embedded data directory to copy the store into (a laptop copy of production)' },
      JSON_OUTPUT,
    ],
    description:
      'with its servers stopped, copy the current store (SWITCHYARD_DATA_DIR, or DATABASE_URL) with its whole log into an empty database, rebuild the ledger, ' +
      'spend and audit chain there and verify them against the source (exit 1 on any difference); run it again to complete an interrupted one',
  },
  'admin-token reset': {
    flags: [],
    description: 'with every server stopped: revoke the stored admin tokens, issue a new one and print it once (recovers a token that was never shown)',
  },
} as const satisfies Readonly<Record<string, CliCommand>>;

export type CliCommandName = keyof typeof CLI_COMMANDS;

/** Each command with its words, in help order. */
export function cliCommands(): Array<{ name: CliCommandName; words: string[]; command: CliCommand }> {
  return (Object.entries(CLI_COMMANDS) as Array<[CliCommandName, CliCommand]>).map(([name, command]) => ({ name, words: name.split(' '), command }));
}

/** The option types node:util's parseArgs infers its result from: strings for flags with a value, booleans for switches. */
type ParserOption<Flag> = {
  type: Flag extends { value: string } ? 'string' : 'boolean';
  multiple: Flag extends { multiple: true } ? true : false;
  short?: string;
} & (Flag extends { default: string } ? { default: string } : unknown);

type ParserOptions<Flags extends readonly CliFlag[]> = { [Flag in Flags[number] as Flag['name']]: ParserOption<Flag> };

/** The parseArgs options of a command, from its flags. */
export function parserOptions<Name extends CliCommandName>(name: Name): ParserOptions<(typeof CLI_COMMANDS)[Name]['flags']> {
  const command: CliCommand = CLI_COMMANDS[name];
  return Object.fromEntries(
    command.flags.map((flag) => [
      flag.name,
      {
        type: flag.value === undefined ? 'boolean' : 'string',
        multiple: flag.multiple === true,
        ...(flag.short ? { short: flag.short } : {}),
        ...(flag.default !== undefined ? { default: flag.default } : {}),
      },
    ]),
  ) as ParserOptions<(typeof CLI_COMMANDS)[Name]['flags']>;
}
