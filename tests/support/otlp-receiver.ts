import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** A span as an OTLP/HTTP exporter sent it, with its ids in hex. */
export interface ReceivedSpan {
  /** The resource's service.name: which process sent it. */
  service: string;
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  links: Array<{ traceId: string; spanId: string }>;
}

export const spanKind = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const;

interface JsonAttribute {
  key: string;
  value?: { stringValue?: string };
}

interface JsonSpan {
  traceId?: string;
  spanId?: string;
  parentSpanId?: string;
  name?: string;
  kind?: number;
  links?: Array<{ traceId?: string; spanId?: string }>;
}

interface ExportTraceServiceRequest {
  resourceSpans?: Array<{ resource?: { attributes?: JsonAttribute[] }; scopeSpans?: Array<{ spans?: JsonSpan[] }> }>;
}

/** OTLP/JSON carries ids in hex; an exporter that writes protobuf's JSON mapping sends base64: both read as hex. */
function hexOf(id: string | undefined): string {
  if (!id) return "";
  if (/^([0-9a-f]{16}|[0-9a-f]{32})$/i.test(id)) return id.toLowerCase();
  return Buffer.from(id, "base64").toString("hex");
}

/**
 * A test OTLP/HTTP trace receiver: `POST /v1/traces` with the JSON encoding of ExportTraceServiceRequest, what
 * `@opentelemetry/exporter-trace-otlp-http` sends. Point a process's OTEL_EXPORTER_OTLP_ENDPOINT at `endpoint`.
 * Any other encoding is refused with 415, so that an exporter that changed its format fails loudly.
 */
export async function startOtlpReceiver(): Promise<{ endpoint: string; spans(): ReceivedSpan[]; stop(): Promise<void> }> {
  const received: ReceivedSpan[] = [];
  const server = createServer((request, response) => {
    if (request.method !== "POST" || request.url !== "/v1/traces") {
      response.writeHead(404).end();
      return;
    }
    if (!request.headers["content-type"]?.startsWith("application/json")) {
      response.writeHead(415, { "content-type": "text/plain" }).end("this receiver reads OTLP/HTTP JSON only\n");
      return;
    }
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as ExportTraceServiceRequest;
      for (const resourceSpans of body.resourceSpans ?? []) {
        const service = resourceSpans.resource?.attributes?.find((attribute) => attribute.key === "service.name")?.value?.stringValue ?? "";
        for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
          for (const span of scopeSpans.spans ?? []) {
            received.push({
              service,
              traceId: hexOf(span.traceId),
              spanId: hexOf(span.spanId),
              parentSpanId: hexOf(span.parentSpanId),
              name: span.name ?? "",
              kind: span.kind ?? 0,
              links: (span.links ?? []).map((link) => ({ traceId: hexOf(link.traceId), spanId: hexOf(link.spanId) })),
            });
          }
        }
      }
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans: () => [...received],
    stop: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
