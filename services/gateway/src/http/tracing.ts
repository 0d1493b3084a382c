import { context, propagation, type Span, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import type { FastifyInstance } from "fastify";

declare module "fastify" {
  interface FastifyRequest {
    span?: Span;
  }
}

/**
 * A server span per request, continuing the caller's W3C trace, and made the
 * active context of the route handler so that the RPCs it makes join the trace.
 */
export function registerTracing(app: FastifyInstance): void {
  const tracer = trace.getTracer("herald-gateway");
  app.addHook("onRequest", (request, _reply, done) => {
    const parent = propagation.extract(context.active(), request.headers);
    request.span = tracer.startSpan(`${request.method} ${request.routeOptions.url ?? "unmatched"}`, { kind: SpanKind.SERVER }, parent);
    done();
  });
  // Fastify calls the handler synchronously from done(): running done() inside
  // context.with() makes the span's context active for the whole handler.
  app.addHook("preHandler", (request, _reply, done) => {
    if (!request.span) return done();
    context.with(trace.setSpan(context.active(), request.span), done);
  });
  app.addHook("onResponse", (request, reply, done) => {
    request.span?.setAttribute("http.response.status_code", reply.statusCode);
    if (reply.statusCode >= 500) request.span?.setStatus({ code: SpanStatusCode.ERROR });
    request.span?.end();
    done();
  });
}
