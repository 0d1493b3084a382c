// Outbound webhooks benchmark (issue 31). POST /v1/track creates a new contact on every request, so each request is
// one contact.created fact; a project's endpoints, all on a local receiver, each receive every one of them. Measured:
// what arrives per second against what was offered, the time from the fact (the event's timestamp) to its arrival,
// how long the queue takes to drain once the load stops, and the CPU of every process per delivered message. The
// isolation run adds another project whose endpoint takes every call and never answers (until the deadline).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import type autocannon from "autocannon";

export interface WebhookBenchTarget {
  gatewayUrl: string;
  project(): Promise<{ id: string; publicKey: string; secretKey: string }>;
}

export interface WebhookBenchOptions {
  /** /v1/track requests per second of the measured project: each is one event. */
  rate: number;
  /** Endpoints of the measured project; each event goes to all of them. */
  endpoints: number;
  seconds: number;
  /** CPU seconds used so far by each process of the stack. */
  cpuSeconds(): Map<string, number>;
  /** autocannon itself, for a run at a fixed rate. */
  autocannon: typeof autocannon;
}

/** The receiver: `/ok/<n>` answers 204 and records each arrival; `/silent` never answers. */
interface Receiver {
  url: string;
  /** Arrival time (ms since the epoch) and the event's age on arrival, by path, since the last reset. */
  arrivals: Array<{ path: string; at: number; ageMs: number }>;
  silentCalls(): number;
  stop(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const arrivals: Receiver["arrivals"] = [];
  let silent = 0;
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    if (request.url === "/silent") {
      silent++;
      request.resume();
      return; // Never answered: the caller's deadline ends it.
    }
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const at = Date.now();
      const { timestamp } = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { timestamp: string };
      arrivals.push({ path: request.url ?? "", at, ageMs: at - Date.parse(timestamp) });
      response.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    arrivals,
    silentCalls: () => silent,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function createEndpoint(target: WebhookBenchTarget, secretKey: string, url: string): Promise<void> {
  const response = await fetch(`${target.gatewayUrl}/settings/webhooks`, {
    method: "POST",
    headers: { authorization: `Bearer ${secretKey}`, "content-type": "application/json" },
    body: JSON.stringify({ url, description: "bench", eventTypes: ["contact.created"] }),
  });
  if (response.status !== 201) throw new Error(`POST /settings/webhooks: ${response.status} ${await response.text()}`);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;

/** /v1/track at `rate` requests a second for `seconds`, a new contact on each; answers the accepted requests. */
async function trackAtRate(options: WebhookBenchOptions, gatewayUrl: string, publicKey: string, rate: number, label: string) {
  let sent = 0;
  const result = await options.autocannon({
    url: `${gatewayUrl}/v1/track`,
    connections: Math.max(1, Math.min(50, Math.ceil(rate / 20))),
    overallRate: rate,
    duration: options.seconds,
    requests: [
      {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${publicKey}` },
        setupRequest: (request) => ({
          ...request,
          body: JSON.stringify({ email: `${label}-${sent++}-${Date.now()}@webhooks.bench`, event: "page.viewed", data: { n: sent } }),
        }),
      },
    ],
  });
  return result["2xx"];
}

interface RunResult {
  offeredPerSecond: number;
  deliveredPerSecond: number;
  p50: number;
  p99: number;
  drainSeconds: number;
  missing: number;
  cpuMsPerMessage: number;
  silentCalls: number;
}

async function run(target: WebhookBenchTarget, options: WebhookBenchOptions, receiver: Receiver, withSilent: boolean): Promise<RunResult> {
  const healthy = await target.project();
  for (let n = 0; n < options.endpoints; n++) await createEndpoint(target, healthy.secretKey, `${receiver.url}/ok/${n}`);
  const silent = withSilent ? await target.project() : undefined;
  if (silent) await createEndpoint(target, silent.secretKey, `${receiver.url}/silent`);
  // The endpoints' caches and the consumers settle before the measured load.
  await sleep(3_000);
  receiver.arrivals.length = 0;
  const silentBefore = receiver.silentCalls();
  const before = options.cpuSeconds();
  const started = Date.now();
  const [accepted] = await Promise.all([
    trackAtRate(options, target.gatewayUrl, healthy.publicKey, options.rate, "healthy"),
    silent ? trackAtRate(options, target.gatewayUrl, silent.publicKey, Math.max(1, options.rate / 10), "silent") : Promise.resolve(0),
  ]);
  const ended = Date.now();
  const expected = accepted * options.endpoints;
  const drainDeadline = Date.now() + 180_000;
  while (receiver.arrivals.length < expected && Date.now() < drainDeadline) await sleep(100);
  const drained = receiver.arrivals.length >= expected ? (receiver.arrivals.at(-1)?.at ?? ended) : Date.now();
  const after = options.cpuSeconds();
  const cpuSeconds = [...after].reduce((sum, [service, seconds]) => sum + seconds - (before.get(service) ?? 0), 0);
  const during = receiver.arrivals.filter((arrival) => arrival.at <= ended).length;
  const ages = receiver.arrivals.map((arrival) => arrival.ageMs).sort((a, b) => a - b);
  return {
    offeredPerSecond: expected / ((ended - started) / 1_000),
    deliveredPerSecond: during / ((ended - started) / 1_000),
    p50: quantile(ages, 0.5),
    p99: quantile(ages, 0.99),
    drainSeconds: Math.max(0, (drained - ended) / 1_000),
    missing: Math.max(0, expected - receiver.arrivals.length),
    cpuMsPerMessage: (cpuSeconds * 1_000) / Math.max(1, receiver.arrivals.length),
    silentCalls: receiver.silentCalls() - silentBefore,
  };
}

const row = (name: string, result: RunResult, options: WebhookBenchOptions) =>
  `| ${name} | ${options.rate} events/s × ${options.endpoints} endpoints, ${options.seconds} s | ${Math.round(result.deliveredPerSecond)} delivered/s of ${Math.round(result.offeredPerSecond)} offered; drained ${result.drainSeconds.toFixed(1)} s after the load${result.missing > 0 ? `, ${result.missing} missing after 180 s` : ""} | p50 ${Math.round(result.p50)} ms, p99 ${Math.round(result.p99)} ms | ${result.cpuMsPerMessage.toFixed(2)} ms CPU per delivered message, all processes${result.silentCalls > 0 ? `; ${result.silentCalls} calls to the silent endpoint` : ""} |`;

export async function webhookBenchmarks(
  target: WebhookBenchTarget,
  options: WebhookBenchOptions,
): Promise<{ rows: string[]; detail: string }> {
  const receiver = await startReceiver();
  try {
    const alone = await run(target, options, receiver, false);
    const beside = await run(target, options, receiver, true);
    const ratio = beside.p99 / alone.p99;
    return {
      rows: [row("healthy endpoints alone", alone, options), row("the same, beside another project's silent endpoint", beside, options)],
      detail: `Healthy endpoints' p99 beside the silent endpoint: ${ratio.toFixed(2)} × the p99 alone (goal: within 1.2). Load average at the end: ${os
        .loadavg()
        .map((load) => load.toFixed(2))
        .join(", ")}.`,
    };
  } finally {
    await receiver.stop();
  }
}
