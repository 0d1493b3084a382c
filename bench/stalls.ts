// Issue 20's event-loop stalls: each payload at the largest size the API lets through, timed, and how long two
// requests sent meanwhile (each every 10 ms) wait at worst: GET /config, answered by the gateway (and identity), and
// the open pixel of an unknown token, answered by delivery. Goals: under 1 s, and under 100 ms.
import { once } from "node:events";
import { Worker } from "node:worker_threads";
import { scrape } from "@herald/testing";
import type { Probe } from "./probe-thread.ts";
import { type SendBenchTarget, verifiedDomain } from "./send.ts";

/** The gateway's body limit for /v1/send (services/gateway/src/routes/delivery/send-routes.ts). */
const sendBodyLimit = 56 * 1024 * 1024;
/** The renderer's longest template part (packages/rendering, maxSourceLength). */
const maxSourceLength = 500_000;

interface Probed {
  status: number;
  ms: number;
  config: Probe;
  pixel: Probe;
  /** The longest event-loop delay meanwhile, from each process's own monitor (prom-client, 10 ms resolution). */
  gatewayLagMs: number;
  deliveryLagMs: number;
}

/** Where the gateway and delivery serve their metrics (startStack's metricsUrls). */
export interface StallsMetrics {
  gateway: string;
  delivery: string;
}

/** `nodejs_eventloop_lag_max_seconds` since the previous scrape, which resets it, in milliseconds. */
const longestLagMs = async (metricsUrl: string) => ((await scrape(metricsUrl)).value("nodejs_eventloop_lag_max_seconds") ?? 0) * 1_000;

/**
 * Runs `work` while the gateway and delivery are probed from a thread of their own; answers its time, the slowest
 * probes meanwhile, and the longest event-loop delay the two processes saw.
 */
async function whileProbing(gatewayUrl: string, metrics: StallsMetrics, work: () => Promise<number>): Promise<Probed> {
  const probes = new Worker(new URL("./probe-thread.ts", import.meta.url), {
    workerData: [`${gatewayUrl}/config`, `${gatewayUrl}/t/o/not-a-token`],
  });
  // once() rejects on the thread's error event: a probe that fails ends the benchmark.
  await once(probes, "message");
  await Promise.all([longestLagMs(metrics.gateway), longestLagMs(metrics.delivery)]);
  const started = performance.now();
  const status = await work();
  const ms = performance.now() - started;
  const [gatewayLagMs, deliveryLagMs] = await Promise.all([longestLagMs(metrics.gateway), longestLagMs(metrics.delivery)]);
  const answered = once(probes, "message");
  probes.postMessage("stop");
  const [[config, pixel]] = (await answered) as [Probe[]];
  await probes.terminate();
  if (!config || !pixel) throw new Error("the probe thread answered no probes");
  return { status, ms, config, pixel, gatewayLagMs, deliveryLagMs };
}

const row = (name: string, probed: Probed) =>
  `| ${name} | ${probed.status} | ${Math.round(probed.ms)} ms | ${Math.round(probed.config.worstMs)} ms (${probed.config.count}) | ${Math.round(probed.pixel.worstMs)} ms (${probed.pixel.count}) | ${Math.round(probed.gatewayLagMs)} ms, ${Math.round(probed.deliveryLagMs)} ms |`;

export async function stallBenchmarks(target: SendBenchTarget, metrics: StallsMetrics): Promise<string[]> {
  const { secretKey } = await target.project();
  const domain = await verifiedDomain(target, secretKey);
  // Serialized before the timing starts: the bench's own JSON.stringify of 56 MB is not the server's time.
  const bodyOf = (fields: Record<string, unknown>) =>
    new TextEncoder().encode(
      JSON.stringify({ to: `stall-${Date.now()}@stalls.bench`, from: `hello@${domain}`, subject: "Hi", body: "<p>Hi</p>", ...fields }),
    );
  const post = async (body: Uint8Array<ArrayBuffer>) => {
    const answer = await fetch(`${target.gatewayUrl}/v1/send`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${secretKey}` },
      body,
    });
    await answer.arrayBuffer();
    return answer.status;
  };
  const rows: string[] = [];

  // 1. An attachment of newlines then `!` (each newline is two bytes of JSON), up to the body limit.
  const newlines = bodyOf({
    attachments: [
      { filename: "a.bin", content: `${"\n".repeat(Math.floor((sendBodyLimit - 4096) / 2))}!`, contentType: "application/octet-stream" },
    ],
  });
  rows.push(
    row("attachment content: 28 MB of `\\n`, then `!` (56 MB body)", await whileProbing(target.gatewayUrl, metrics, () => post(newlines))),
  );

  // For comparison, the longest content the schema takes, valid base64 (40 MB): receiving, parsing and decoding
  // alone (delivery then refuses the 30 MB decoded with 422, past SEND_ATTACHMENTS_MAX_BYTES).
  const valid = bodyOf({ attachments: [{ filename: "a.bin", content: "A".repeat(40_000_000), contentType: "application/octet-stream" }] });
  rows.push(row("for comparison: 40 MB of valid base64", await whileProbing(target.gatewayUrl, metrics, () => post(valid))));

  // 2. A sender of 1,000 characters, mostly spaces (the gateway's cap).
  const spaces = bodyOf({ from: `${" ".repeat(999)}!` });
  rows.push(row("from: 999 spaces, then `!`", await whileProbing(target.gatewayUrl, metrics, () => post(spaces))));

  // 3. A body of repeated `<a ` as long as a template part may be, tracked: timed until it arrives at the sink.
  const link = '<a href="https://example.com/x">x</a>';
  const anchors = `${link}${"<a ".repeat(Math.floor((maxSourceLength - 2 * link.length) / 3))}${link}`;
  const to = `anchors-${Date.now()}@stalls.bench`;
  const anchored = bodyOf({ to, body: anchors });
  rows.push(
    row(
      "body: 500,000 characters of `<a `, tracked (until delivered)",
      await whileProbing(target.gatewayUrl, metrics, async () => {
        const status = await post(anchored);
        await target.sink.waitForMessages(1, { to, timeoutMs: 120_000 });
        return status;
      }),
    ),
  );

  // 4. A Liquid loop that runs until a limit stops it, for 50 recipients: the call's render budget ends it.
  const heavy = "{% for a in (1..100000) %}{% for b in (1..100000) %}{% endfor %}{% endfor %}";
  const recipients = Array.from({ length: 50 }, (_, index) => `render-${index}-${Date.now()}@stalls.bench`);
  const looping = bodyOf({ to: recipients, body: heavy });
  rows.push(row("body: an endless Liquid loop, 50 recipients", await whileProbing(target.gatewayUrl, metrics, () => post(looping))));
  return rows;
}
