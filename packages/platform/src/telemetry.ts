import { type Context, context, propagation, ROOT_CONTEXT, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, SimpleSpanProcessor, type SpanExporter, TracerProvider } from "@opentelemetry/sdk-trace";

/**
 * The W3C traceparent of the current span, for work that outlives the call (a queued email): stored with it,
 * it lets the work's own spans join the caller's trace later (contextOfTraceParent). Null outside a trace.
 */
export function currentTraceParent(): string | null {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ?? null;
}

/** The context a stored traceparent names, for spans that continue its trace; the root context for null. */
export function contextOfTraceParent(traceParent: string | null): Context {
  return traceParent ? propagation.extract(ROOT_CONTEXT, { traceparent: traceParent }) : ROOT_CONTEXT;
}

export interface Telemetry {
  shutdown(): Promise<void>;
}

/**
 * Registers the W3C propagator and async context for the process, and exports
 * spans over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set (or to the given
 * exporter, which tests use). Without an exporter, trace context still flows
 * through HTTP, gRPC and Kafka headers so that a collector downstream can join it.
 */
export function startTelemetry(options: { serviceName: string; exporter?: SpanExporter; env?: NodeJS.ProcessEnv }): Telemetry {
  const env = options.env ?? process.env;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());

  const exporter = options.exporter ?? (env.OTEL_EXPORTER_OTLP_ENDPOINT ? new OTLPTraceExporter() : undefined);
  if (!exporter) return { shutdown: async () => {} };

  const provider = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": options.serviceName }),
    // Tests read spans at once; production batches them.
    spanProcessors: [options.exporter ? new SimpleSpanProcessor({ exporter }) : new BatchSpanProcessor({ exporter })],
  });
  trace.setGlobalTracerProvider(provider);
  return {
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}
