import { type Context, type Span, SpanKind, SpanStatusCode, type TextMapGetter, type TextMapSetter, type Tracer, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler, AlwaysOnSampler, BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, type Sampler, SimpleSpanProcessor,
  type SpanProcessor, TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import type { IncomingHttpHeaders } from 'node:http';
import type { ObservabilitySettings, SamplerSettings } from './observability-settings.js';

const headerGetter: TextMapGetter<IncomingHttpHeaders> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key],
};
const headerSetter: TextMapSetter<Record<string, string>> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};

/**
 * Traces: one server span per request and one client span per attempt, with the GenAI semantic
 * conventions' attributes. Contexts are passed explicitly (no async-hooks context manager, no global
 * provider: two gateways in one process keep their own). Without an exporter nothing is recorded, but
 * a client's `traceparent` still reaches the provider, so the gateway never breaks a caller's trace.
 */
export class GatewayTracing {
  private readonly propagator = new W3CTraceContextPropagator();
  private readonly provider: BasicTracerProvider | null;
  private readonly tracer: Tracer;

  constructor(settings: Pick<ObservabilitySettings, 'otlpEndpoint' | 'sampler' | 'serviceName' | 'spanExporter'>) {
    const processors: SpanProcessor[] = [];
    // A test exporter sees each span as it ends; the network exporter batches.
    if (settings.spanExporter) processors.push(new SimpleSpanProcessor(settings.spanExporter));
    else if (settings.otlpEndpoint) processors.push(new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.otlpEndpoint })));
    this.provider = processors.length > 0
      ? new BasicTracerProvider({
        resource: resourceFromAttributes({ 'service.name': settings.serviceName }),
        sampler: sampler(settings.sampler),
        spanProcessors: processors,
      })
      : null;
    this.tracer = this.provider ? this.provider.getTracer('switchyard') : trace.getTracer('switchyard-unexported');
  }

  /** The server span of a request, a child of the caller's `traceparent` when it sent a valid one. */
  startServerSpan(name: string, headers: IncomingHttpHeaders, attributes: Record<string, string | number>): { span: Span; context: Context } {
    const parent = this.propagator.extract(ROOT_CONTEXT, headers, headerGetter);
    // Without a provider the "span" carries the caller's context unchanged, which is what gets propagated.
    const span = this.provider ? this.tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent) : trace.wrapSpanContext(trace.getSpanContext(parent) ?? INVALID);
    return { span, context: trace.setSpan(parent, span) };
  }

  /**
   * A span of work the gateway does for a request on its own behalf (a content policy's moderation call): a child
   * of that request's server span, so one trace shows the request and what it caused.
   */
  startInternalSpan(name: string, parent: Context, attributes: Record<string, string | number>): { span: Span; context: Context } {
    const span = this.provider ? this.tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes }, parent) : trace.wrapSpanContext(trace.getSpanContext(parent) ?? INVALID);
    return { span, context: trace.setSpan(parent, span) };
  }

  /** A client span for one attempt, and the headers that carry it to the provider. */
  startClientSpan(name: string, parent: Context, attributes: Record<string, string | number>): { span: Span; headers: Record<string, string> } {
    const headers: Record<string, string> = {};
    if (!this.provider) {
      // Nothing recorded: the caller's context (already in the server context) is what goes upstream.
      const carried = trace.getSpan(parent);
      if (carried) {
        this.propagator.inject(parent, headers, headerSetter);
        return { span: carried, headers };
      }
      return { span: trace.wrapSpanContext(INVALID), headers };
    }
    const span = this.tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, parent);
    this.propagator.inject(trace.setSpan(parent, span), headers, headerSetter);
    return { span, headers };
  }

  /** Exports what is buffered and stops (shutdown). */
  async close(): Promise<void> {
    await this.provider?.shutdown().catch(() => undefined);
  }
}

const INVALID = trace.wrapSpanContext({ traceId: '0'.repeat(32), spanId: '0'.repeat(16), traceFlags: 0 }).spanContext();

export function endSpan(span: Span, error: string | null): void {
  if (error) span.setStatus({ code: SpanStatusCode.ERROR, message: error }).setAttribute('error.type', error);
  span.end();
}

function sampler(settings: SamplerSettings): Sampler {
  const ratio = new TraceIdRatioBasedSampler(settings.ratio);
  switch (settings.kind) {
    case 'always_on': return new AlwaysOnSampler();
    case 'always_off': return new AlwaysOffSampler();
    case 'traceidratio': return ratio;
    case 'parentbased_always_on': return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off': return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio': return new ParentBasedSampler({ root: ratio });
  }
}
