import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { GatewayTracing } from '../../modules/observability/gateway-tracing.js';
import { readObservabilitySettings } from '../../modules/observability/observability-settings.js';
import { listenOn, testPort } from '../support/port-range.js';

/** This suite's own port (port-range.ts). */
const COLLECTOR_PORT = testPort(1320);
const CALLER = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' };
const UNSAMPLED_CALLER = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00' };

function oneRequestTrace(tracing: GatewayTracing, headers: Record<string, string>): Record<string, string> {
  const server = tracing.startServerSpan('POST /v1/chat/completions', headers, { 'switchyard.request_id': 'r1' });
  const attempt = tracing.startClientSpan('chat model-a', server.context, { 'gen_ai.operation.name': 'chat' });
  attempt.span.end();
  server.span.end();
  return attempt.headers;
}

describe('trace export and sampling', () => {
  let collector: Server;
  const received: Array<{ path: string; type: string; body: string }> = [];
  beforeAll(async () => {
    collector = createServer((req: IncomingMessage, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        received.push({ path: req.url ?? '', type: String(req.headers['content-type']), body });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await listenOn(collector, COLLECTOR_PORT);
  });
  afterAll(async () => {
    await new Promise((resolve) => collector.close(resolve));
  });

  test('OTEL_EXPORTER_OTLP_ENDPOINT sends the spans to the collector over OTLP/HTTP', async () => {
    const settings = readObservabilitySettings({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${COLLECTOR_PORT}`, OTEL_SERVICE_NAME: 'switchyard-test' });
    const tracing = new GatewayTracing(settings);
    oneRequestTrace(tracing, CALLER);
    await tracing.close(); // flushes the batch
    const exported = received.filter((r) => r.path === '/v1/traces');
    expect(exported.length).toBeGreaterThan(0);
    const body = exported.map((r) => r.body).join('\n');
    // JSON or protobuf, the ids and names travel as they are.
    expect(body).toMatch(/chat model-a/);
    expect(body).toMatch(/switchyard-test/);
  });

  test('without an endpoint nothing is exported, and the caller\'s trace context still reaches the provider', () => {
    const tracing = new GatewayTracing(readObservabilitySettings({}));
    expect(oneRequestTrace(tracing, CALLER)).toEqual(CALLER);
    expect(oneRequestTrace(tracing, {})).toEqual({});
  });

  test.each([
    ['always_off', undefined, CALLER, 0],
    ['always_on', undefined, UNSAMPLED_CALLER, 2],
    ['parentbased_always_on', undefined, UNSAMPLED_CALLER, 0],
    ['parentbased_always_on', undefined, CALLER, 2],
    ['traceidratio', '0', {}, 0],
    ['traceidratio', '1', {}, 2],
    ['parentbased_traceidratio', '0', CALLER, 2],
  ])('OTEL_TRACES_SAMPLER=%s (arg %s) keeps the expected spans', (sampler, arg, headers, spans) => {
    const exporter = new InMemorySpanExporter();
    const tracing = new GatewayTracing({ ...readObservabilitySettings({ OTEL_TRACES_SAMPLER: sampler, OTEL_TRACES_SAMPLER_ARG: arg }), spanExporter: exporter });
    const upstream = oneRequestTrace(tracing, headers);
    expect(exporter.getFinishedSpans()).toHaveLength(spans);
    // The decision travels with the trace: the provider sees sampled (01) or not (00).
    expect(upstream.traceparent).toMatch(spans > 0 ? /-01$/ : /-00$/);
  });
});
