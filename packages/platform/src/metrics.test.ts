import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "./logger.js";
import { createMetrics, type GaugeSample, type Metrics } from "./metrics.js";

const logger = createLogger({ name: "metrics-test", level: "silent" });

describe("createMetrics", () => {
  let metrics: Metrics | undefined;
  afterEach(async () => {
    await metrics?.close();
  });

  it("serves the registry on GET /metrics of METRICS_PORT, and nothing elsewhere", async () => {
    metrics = createMetrics({ port: 0, logger });
    const port = await metrics.listen("127.0.0.1");
    const answer = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(answer.status).toBe(200);
    expect(await answer.text()).toContain("# TYPE process_cpu_user_seconds_total counter");
    expect((await fetch(`http://127.0.0.1:${port}/other`)).status).toBe(404);
    expect((await fetch(`http://127.0.0.1:${port}/metrics`, { method: "POST" })).status).toBe(404);
  });

  it("answers 400 to a request target that is no path (absolute form, asterisk), and serves on", async () => {
    metrics = createMetrics({ port: 0, logger });
    const port = Number(await metrics.listen("127.0.0.1"));
    for (const target of ["http://[", "*", "http://metrics/metrics", "example.com:443"]) {
      expect(await rawStatusLine(port, `GET ${target} HTTP/1.1\r\nhost: metrics\r\n\r\n`), target).toBe("HTTP/1.1 400 Bad Request");
    }
    expect(await rawStatusLine(port, "GET /metrics?name[]=up HTTP/1.1\r\nhost: metrics\r\n\r\n")).toBe("HTTP/1.1 200 OK");
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(200);
  });

  it("listens nowhere without a port", async () => {
    metrics = createMetrics({ port: undefined, logger });
    expect(await metrics.listen("127.0.0.1")).toBeUndefined();
  });

  it("reads each reader once per scrape for all its gauges, and leaves them empty when it fails", async () => {
    metrics = createMetrics({ port: undefined, logger });
    let reads = 0;
    let fail = false;
    metrics.observe({
      reader: "queue",
      gauges: { test_depth: { help: "depth", labelNames: ["state"] }, test_age_seconds: { help: "age" } },
      read: async () => {
        reads++;
        if (fail) throw new Error("the database is away");
        return { test_depth: [{ labels: { state: "due" }, value: 3 }], test_age_seconds: [{ value: 1.5 }] };
      },
    });
    const first = await metrics.registry.metrics();
    expect(reads).toBe(1);
    expect(first).toContain('test_depth{state="due"} 3');
    expect(first).toContain("test_age_seconds 1.5");

    fail = true;
    const second = await metrics.registry.metrics();
    expect(reads).toBe(2);
    // No stale value: the gauges are declared, without samples.
    expect(second).toContain("# TYPE test_depth gauge");
    expect(second).not.toContain('test_depth{state="due"}');
    expect(second).not.toMatch(/^test_age_seconds /m);
    // The failure counts from the next scrape on: a scrape reads every series at once.
    expect(await metrics.registry.metrics()).toContain('herald_metrics_read_failures_total{reader="queue"} 1');
  });

  it("gives up on a reader slower than its timeout", async () => {
    metrics = createMetrics({ port: undefined, logger });
    metrics.observe({
      reader: "slow",
      gauges: { test_slow: { help: "slow" } },
      read: () =>
        new Promise<{ test_slow: GaugeSample[] }>((resolve) => setTimeout(() => resolve({ test_slow: [{ value: 1 }] }), 5_000).unref()),
      timeoutMs: 50,
    });
    expect(await metrics.registry.metrics()).not.toMatch(/^test_slow /m);
    expect(await metrics.registry.metrics()).toContain('herald_metrics_read_failures_total{reader="slow"} 1');
  });
});

/** The status line the server answers to raw request bytes. */
function rawStatusLine(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(request));
    let received = "";
    socket.on("data", (chunk: Buffer) => {
      received += chunk.toString("latin1");
      const end = received.indexOf("\r\n");
      if (end !== -1) {
        socket.destroy();
        resolve(received.slice(0, end));
      }
    });
    socket.on("error", reject);
    socket.on("close", () => reject(new Error(`closed after ${JSON.stringify(received)}`)));
  });
}
