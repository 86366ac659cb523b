import { Logger, type LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { AdminGuard } from '../modules/admin/admin.guard.js';
import { AdminTokens, LOST_ADMIN_TOKEN_NOTICE, checkConfiguredAdminToken } from '../modules/admin/admin-tokens.js';
import { GatewayAuthenticator } from '../modules/access/gateway-authenticator.js';
import { ClientConnectionErrors } from '../modules/inference/http/client-connection-errors.js';
import { clientFormatForPath, parameterPathStyleForPath } from '../modules/inference/http/client-format-for-path.js';
import { EarlyAuthentication, deferContinue } from '../modules/inference/http/early-authentication.js';
import { BODY_LIMIT, GatewayExceptionFilter } from '../modules/inference/http/gateway-exception.filter.js';
import { type HttpSettings, httpSettings, timeoutCheckIntervalMs } from '../modules/inference/http/http-settings.js';
import { parseJsonBody } from '../modules/inference/http/json-body-parser.js';
import { answerRouterError } from '../modules/inference/http/router-errors.js';
import { MockProviderHost } from '../modules/providers/mock/mock-provider-host.js';
import { consoleApiSecurityHeaders } from '../modules/console/console-security-headers.js';
import { AppModule } from './app.module.js';
import { startupApplyLog } from './config/apply/apply-report.js';
import { ConfigApplier } from './config/apply/config-applier.js';
import { demoConfig } from './config/demo-config.js';
import type { Environment } from './config/environment.js';
import { type GatewayConfig, parseGatewayConfig } from './config/gateway-config.js';
import { uuidv7 } from './kernel/ids.js';
import { currentSecretReferencePolicy, installSecretReferencePolicy } from './kernel/secret-references/secret-reference.js';
import { OperatorSocket } from './operator-socket.js';
import { openPlatform, type Platform } from './platform.js';
import { installPublicationGuard } from './publication-guard.js';
import { warmTokenizer } from '../modules/canonical/tokenizer.js';
import { Observability, Readiness } from '../modules/observability/index.js';
import { GatewayLogger } from './gateway-logger.js';


export interface Gateway {
  app: NestFastifyApplication;
  platform: Platform;
  url: string;
  /** The demo key when serving the built-in demo configuration. */
  demoKey: string | null;
  /** The admin token generated on this first start, to be printed once; null when ADMIN_TOKEN is set or one exists. */
  adminToken: string | null;
  mock: MockProviderHost;
  close(): Promise<void>;
}

export interface StartOptions {
  /** Apply SWITCHYARD_CONFIG (or the demo) at start. */
  applyConfig?: boolean;
  /** Listen on this port instead of the environment's (0 = any free port). */
  port?: number;
  /** Run the durable projections (ledger, spend) in this process; default: unless SWITCHYARD_PROJECTOR=external. */
  runDurable?: boolean;
}

/** The configuration a start applies: SWITCHYARD_CONFIG, or the built-in demo (whose key is kept in the data directory). */
export function startupConfiguration(environment: Environment): { config: GatewayConfig; source: string; demoKey: string | null } {
  if (environment.configPath) {
    return { config: parseGatewayConfig(readFileSync(environment.configPath, 'utf8'), environment.configPath), source: environment.configPath, demoKey: null };
  }
  const demo = demoConfig(environment.dataDir);
  // The demo's key file is the gateway's own; its directory is readable whatever SWITCHYARD_SECRETS_DIR says.
  const policy = currentSecretReferencePolicy();
  if (!policy.secretDirectories.includes(demo.secretsDir)) {
    installSecretReferencePolicy({ ...policy, secretDirectories: [...policy.secretDirectories, demo.secretsDir] });
  }
  return { config: parseGatewayConfig(demo.yaml, 'built-in demo'), source: 'built-in demo', demoKey: demo.key };
}

/** Methods whose requests carry no body here: an empty one with a JSON content type is no body. */
const BODYLESS_METHODS = new Set(['DELETE', 'GET', 'HEAD', 'OPTIONS']);

/** Opens the platform, wires the NestJS modules, applies the configuration and starts serving. */
export async function startGateway(environment: Environment, options: StartOptions = {}): Promise<Gateway> {
  const gatewayLogger = new GatewayLogger(logLevels(environment.logLevel));
  Logger.overrideLogger(gatewayLogger);
  const logger = new Logger('Switchyard');
  // A configuration file with a mistake stops the start before anything is opened or generated: a first start
  // that failed on it after generating the admin token could never show that token (it is stored hashed).
  const configured = (options.applyConfig ?? true) && environment.configPath ? startupConfiguration(environment) : null;
  // Likewise a configured admin token that will be refused: before the store is opened (or a data directory made).
  checkConfiguredAdminToken(environment.adminToken);
  const platform = await openPlatform(environment, { runDurable: options.runDurable ?? (environment.projector ?? 'embedded') === 'embedded', spool: true });
  let tokens: AdminTokens | null = null;
  try {
    installPublicationGuard(platform);
    await platform.runner.start();
    const http = httpSettings(environment.http);
    const connectionErrors = new ClientConnectionErrors(http);
    const adapter = new FastifyAdapter({
      bodyLimit: BODY_LIMIT,
      genReqId: () => uuidv7(),
      requestIdHeader: false,
      logger: false,
      // Shutdown answers come from EarlyAuthentication, in the client's envelope.
      return503OnClosing: false,
      // Not used while parseJsonBody is the only parser; kept strict should a default parser come back.
      onProtoPoisoning: 'error',
      onConstructorPoisoning: 'error',
      // No socket inactivity timeout: a buffered answer may take minutes; the pipeline's deadlines bound it.
      connectionTimeout: 0,
      keepAliveTimeout: http.keepAliveTimeoutMs,
      requestTimeout: http.bodyTimeoutMs,
      http: {
        headersTimeout: http.headersTimeoutMs,
        requestTimeout: http.bodyTimeoutMs,
        keepAliveTimeout: http.keepAliveTimeoutMs,
        connectionsCheckingInterval: timeoutCheckIntervalMs(http),
      },
      clientErrorHandler: connectionErrors.handle,
      frameworkErrors: answerRouterError,
    });
    const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(platform), adapter, {
      logger: gatewayLogger,
      bufferLogs: false,
      // Only JSON bodies are accepted, through the parser below; any other type is a 415.
      bodyParser: false,
    });
    let closing = false;
    const fastify = adapter.getInstance();
    fastify.removeAllContentTypeParsers();
    app.useBodyParser('application/json', { bodyLimit: BODY_LIMIT }, (request, body, done) => {
      // A method without a body (DELETE /admin/v1/content-policies/{id}, say) sent with a JSON content type and
      // nothing after it, as many HTTP clients do: no body, not an invalid one.
      if (body.length === 0 && BODYLESS_METHODS.has(request.method)) return done(null, undefined);
      try {
        done(null, parseJsonBody(body.toString('utf8'), parameterPathStyleForPath(request.url)));
      } catch (error) {
        done(error as Error, undefined);
      }
    });
    const observability = app.get(Observability);
    const spool = platform.spool;
    if (spool) {
      observability.readSpoolDepthFrom(() => spool.spoolBytes());
      app.get(Readiness).readSpoolFrom(() => ({ bytes: spool.spoolBytes(), maxBytes: spool.maxBytes, full: spool.full }));
    }
    // First, so that every answer — refusals included — is observed and carries the overhead header.
    fastify.addHook('onRequest', observability.track);
    fastify.addHook('onRequest', connectionErrors.track);
    // Before authentication, so that its refusals under /console/api carry the console's headers too.
    fastify.addHook('onRequest', consoleApiSecurityHeaders);
    const adminOnly = (path: string) => path === '/metrics' && observability.settings.metricsAccess === 'admin';
    fastify.addHook('onRequest', new EarlyAuthentication(app.get(GatewayAuthenticator), app.get(AdminGuard), () => closing, adminOnly).onRequest);
    boundConnections(adapter.getHttpServer(), http, logger);
    deferContinue(adapter.getHttpServer());
    app.useGlobalFilters(new GatewayExceptionFilter(clientFormatForPath));
    await app.init();
    const adminTokens = app.get(AdminTokens);
    tokens = adminTokens;
    const adminToken = adminTokens.takeGeneratedToken();

    let demoKey: string | null = null;
    if (options.applyConfig ?? true) {
      const startup = configured ?? startupConfiguration(environment);
      demoKey = startup.demoKey;
      const result = await app.get(ConfigApplier).apply(startup.config, { dryRun: false, prune: false, actor: `config:${startup.source}` });
      const lines = startupApplyLog(startup.source, result);
      for (const line of lines.log) logger.log(line);
      for (const line of lines.warn) logger.warn(line);
    }
    warmTokenizer(); // ≈0.35 s once, before traffic rather than on the first request
    await app.listen(options.port ?? environment.port, environment.host);
    const url = (await app.getUrl()).replace('[::1]', 'localhost');
    // With embedded PGlite nobody else may open the store: the CLI reaches it through this process.
    const operatorSocket = platform.database.kind === 'pglite' && environment.dataDir !== ':memory:'
      ? await OperatorSocket.open(environment.dataDir, fastify, adminTokens).catch((error: Error) => {
        logger.warn(`no operator socket (${error.message}); CLI commands need the server stopped`);
        return null;
      })
      : null;
    return {
      app, platform, url, demoKey, adminToken,
      mock: app.get(MockProviderHost),
      close: () => shutDown(app, platform, observability, logger, async () => {
        closing = true;
        // No more operator commands either while the node drains.
        await operatorSocket?.close().catch(() => undefined);
      }),
    };
  } catch (error) {
    if (tokens?.generatedOne) logger.error(LOST_ADMIN_TOKEN_NOTICE);
    await platform.close().catch(() => undefined);
    throw error;
  }
}

/** After the deadline, how long requests that were cut get to settle (cancel upstream, commit what they produced). */
const SETTLE_AFTER_CUT_MS = 5_000;

/**
 * Graceful shutdown (docs/operations.md "Shutdown"): stop accepting connections, answer requests that still arrive
 * on open connections with 503 (`connection: close`), let the requests and streams in flight finish up
 * to SWITCHYARD_SHUTDOWN_DEADLINE_MS, cut those still running (each settles what it produced), then
 * close the modules, flush the group committer and stop the projections (durable checkpoints are
 * committed with their writes, so nothing is lost there).
 */
async function shutDown(app: NestFastifyApplication, platform: Platform, observability: Observability, logger: Logger, startClosing: () => Promise<void>): Promise<void> {
  await startClosing();
  const server = app.getHttpServer() as Server;
  // No new connections; Fastify's own close later tolerates the server being closed already.
  server.close();
  server.closeIdleConnections();
  const deadlineMs = observability.settings.shutdownDeadlineMs;
  const inFlight = observability.inFlight;
  if (inFlight > 0 && !(await observability.waitForIdle(deadlineMs))) {
    const cut = observability.cutInFlight();
    logger.warn(`shutdown deadline (${deadlineMs} ms) reached: ${cut} request(s) still in flight were ended; settling what they produced`);
    await observability.waitForIdle(SETTLE_AFTER_CUT_MS);
  }
  // Every request's events are committed; the projections this process runs (the ledger among them)
  // apply them and commit their checkpoints before the process goes, so a restart has nothing to redo.
  await platform.committer.drain();
  await platform.runner.catchUp().catch((error: Error) => logger.warn(`projections did not catch up before shutdown (${error.message}); they resume from their checkpoints`));
  await app.close();
  await platform.close();
}

/**
 * Node closes a connection beyond the cap as soon as it is accepted, before reading from it: the served
 * connections are untouched and the refused client can retry elsewhere. Refusals are logged at most once
 * a minute, with their count.
 */
function boundConnections(server: Server, settings: HttpSettings, logger: Logger): void {
  server.maxConnections = settings.maxConnections;
  let refused = 0;
  let reported = 0;
  server.on('drop', () => {
    refused++;
    if (Date.now() - reported < 60_000) return;
    reported = Date.now();
    logger.warn(`${refused} connection(s) refused: ${settings.maxConnections} client connections are open (SWITCHYARD_HTTP_MAX_CONNECTIONS)`);
    refused = 0;
  });
}

export function logLevels(level: Environment['logLevel']): LogLevel[] {
  const order: LogLevel[] = ['error', 'warn', 'log', 'debug'];
  return order.slice(0, order.indexOf(level) + 1);
}
