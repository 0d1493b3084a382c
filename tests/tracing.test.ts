import { startTelemetry, type Telemetry } from "@herald/platform";
import { serviceNames } from "@herald/testing";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createTestGateway } from "./support/gateway.js";

describe("tracing through the gateway", () => {
  const exporter = new InMemorySpanExporter();
  let telemetry: Telemetry;
  let gateway: Awaited<ReturnType<typeof createTestGateway>>;

  beforeAll(async () => {
    telemetry = startTelemetry({ serviceName: "gateway-test", exporter });
    const { stack, redisUrl } = inject("herald");
    gateway = await createTestGateway({ serviceUrls: stack.serviceUrls, redisUrl });
  });

  afterAll(async () => {
    await gateway.close();
    await telemetry.shutdown();
  });

  it("continues the caller's trace into the RPCs a request makes", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const response = await gateway.app.inject({
      method: "GET",
      url: "/health",
      headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    });
    expect(response.statusCode).toBe(200);
    const spans = exporter.getFinishedSpans();
    const requestSpan = spans.find((span) => span.name === "GET /health");
    const rpcSpans = spans.filter((span) => span.name === "grpc.health.v1.Health/Check");
    expect(requestSpan?.spanContext().traceId).toBe(traceId);
    // One health check of each service.
    expect(rpcSpans).toHaveLength(serviceNames.length);
    for (const span of rpcSpans) {
      expect(span.spanContext().traceId).toBe(traceId);
      expect(span.parentSpanContext?.spanId).toBe(requestSpan?.spanContext().spanId);
    }
  });
});
