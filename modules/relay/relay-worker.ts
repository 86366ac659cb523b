import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { Logger, type LoggerService } from '@nestjs/common';
import { type RelayClientProxy, relayClient } from './relay-client.js';
import { eventView } from './event-view.js';
import { type RelayMessage, RelayRefusedError, relayMessage } from './relay-message.js';
import { pageFailure, publishPage } from './relay-page.js';
import { RELAY_BROKER_NAMES } from './relay-transport.js';
import type { RelayCall, RelayFailure, RelayLogLevel, RelayReply, RelayThreadOptions } from './relay-thread-protocol.js';

/**
 * The relay's publishing thread: the envelopes' serialization and the broker's client proxy (its connection,
 * reconnection, protocol encoding, socket writes and acknowledgements) run here, beside the gateway's event loop;
 * the gateway's thread only hands pages of events over (`relay-thread.ts`). On the embedded default the
 * relay's projection runs on the serving thread: publishing there cost every request about 45 µs of that thread
 * (bench/relay-serving-cost.ts).
 */
const port = parentPort;
if (!port) throw new Error('relay-worker must run as a worker thread');
const options = workerData as RelayThreadOptions;

function reply(message: RelayReply): void {
  port!.postMessage(message);
}

/** The client's log lines go to the gateway's logger (its format and level), not to this thread's console. */
class ForwardedLogger implements LoggerService {
  constructor(private readonly to: MessagePort) {}
  log(message: unknown, ...params: unknown[]): void { this.forward('log', message, params); }
  error(message: unknown, ...params: unknown[]): void { this.forward('error', message, params); }
  warn(message: unknown, ...params: unknown[]): void { this.forward('warn', message, params); }
  debug(message: unknown, ...params: unknown[]): void { this.forward('debug', message, params); }
  verbose(message: unknown, ...params: unknown[]): void { this.forward('verbose', message, params); }
  fatal(message: unknown, ...params: unknown[]): void { this.forward('fatal', message, params); }

  private forward(level: RelayLogLevel, message: unknown, params: unknown[]): void {
    // A Nest Logger with a context passes it last.
    const context = typeof params[params.length - 1] === 'string' ? (params[params.length - 1] as string) : 'Relay';
    this.to.postMessage({ kind: 'log', level, context, message: text(message) } satisfies RelayReply);
  }
}

function text(message: unknown): string {
  if (typeof message === 'string') return message;
  if (message instanceof Error) return message.message;
  try {
    return JSON.stringify(message) ?? String(message);
  } catch {
    return String(message);
  }
}

/** The page's failure (relay-page.ts) as the protocol carries it back. */
function failureOf(failures: readonly unknown[], transport: string): RelayFailure | null {
  const failure = pageFailure(failures, transport);
  if (failure === null) return null;
  if (failure instanceof RelayRefusedError) return { kind: 'refused', transport: failure.transport, eventId: failure.eventId, reason: failure.reason };
  return { kind: 'unavailable', transport: failure.transport, reason: failure.reason };
}

Logger.overrideLogger(new ForwardedLogger(port));
const broker = RELAY_BROKER_NAMES[options.settings.transport];
// A client that cannot be made (it should not: the settings were checked at start) fails every page as unavailable.
const client: Promise<RelayClientProxy> = relayClient(options.settings, options.ackTimeoutMs);
client.catch(() => undefined);

port.on('message', (call: RelayCall) => {
  void handle(call);
});

async function handle(call: RelayCall): Promise<void> {
  switch (call.op) {
    case 'publish': {
      let published = 0;
      let failure: RelayFailure | null;
      const messages: RelayMessage[] = [];
      for (const event of call.events) {
        try {
          messages.push(relayMessage(eventView(event)));
        } catch (error) {
          // Nothing of the page is published: the relay halts at this event (the runner finds it alone).
          reply({ kind: 'published', id: call.id, published: 0, failure: { kind: 'unserializable', eventId: event.eventId, reason: error instanceof Error ? error.message : String(error) } });
          return;
        }
      }
      try {
        const outcome = await publishPage(await client, messages);
        published = outcome.published;
        failure = failureOf(outcome.failures, broker);
      } catch (error) {
        failure = failureOf([error], broker);
      }
      reply({ kind: 'published', id: call.id, published, failure });
      return;
    }
    case 'close': {
      await client.then((proxy) => proxy.close()).catch(() => undefined);
      reply({ kind: 'closed', id: call.id });
      return;
    }
  }
}
