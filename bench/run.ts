// `npm run bench`: starts its own stack (every service and the gateway as real
// processes, on a database of its own) and measures the paths that exist so far.
// Results are printed as Markdown rows for docs/benchmarks.md.
import { readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import { createClient } from "@connectrpc/connect";
import { ensureInfrastructure } from "@herald/devinfra";
import { createRpcTransport } from "@herald/platform";
import { IdentityService } from "@herald/proto/herald/identity/v1/identity_service_pb";
import {
  createTestDatabase,
  migrateAllServices,
  prepareTemplateDatabase,
  repoRoot,
  startStack,
  startTestDnsServer,
  startTestSmtpSink,
} from "@herald/testing";
import autocannon from "autocannon";
import { campaignBenchmarks } from "./campaigns.ts";
import { dashboardFirstScreen } from "./dashboard.ts";
import { lanesBenchmarks } from "./lanes.ts";
import { replicaBenchmarks } from "./replicas.ts";
import { scaleBenchmarks } from "./scale.ts";
import { segmentBenchmarks } from "./segments.ts";
import { delivered, sendApi, verifyApi } from "./send.ts";
import { stallBenchmarks } from "./stalls.ts";
import { webhookBenchmarks } from "./webhooks.ts";
import { benchTriggerEvent, delayedEmails, listeningWorkflows, type WorkflowBenchTarget } from "./workflows.ts";

const durationSeconds = Number(process.env.BENCH_SECONDS ?? 10);
/** Unmeasured load before each HTTP measurement: JIT, connection pools and Kafka's JVM settle first. */
const warmupSeconds = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);

/** Runs the load unmeasured for warmupSeconds, then measured for durationSeconds. */
async function load(options: autocannon.Options): Promise<autocannon.Result> {
  if (warmupSeconds > 0) await autocannon({ ...options, duration: warmupSeconds });
  return autocannon({ ...options, duration: durationSeconds });
}

async function http(name: string, url: string, connections: number): Promise<string> {
  const result = await load({ url, connections, pipelining: 1 });
  const ok = result["2xx"];
  return `| ${name} | ${connections} connections | ${Math.round(result.requests.average)} req/s | p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms | ${ok} ok, ${result.non2xx} non-2xx, ${result.errors} errors |`;
}

/** A signed-up user's new project, through the REST API. */
async function benchProject(gatewayUrl: string): Promise<{ id: string; publicKey: string; secretKey: string }> {
  const signUp = await fetch(`${gatewayUrl}/auth/signup`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: `bench-${Date.now()}-${Math.random()}@bench.test`, password: "benchmark-password" }),
  });
  const cookie = (signUp.headers.getSetCookie()[0] ?? "").split(";")[0] ?? "";
  const created = await fetch(`${gatewayUrl}/users/@me/projects`, {
    method: "POST",
    headers: { "content-type": "application/json", cookie },
    body: JSON.stringify({ name: "Benchmark" }),
  });
  return (await created.json()) as { id: string; publicKey: string; secretKey: string };
}

/**
 * CPU seconds the stack's processes of this checkout have used so far, by service (from /proc,
 * clock ticks of 1/100 s): on a shared machine, what each request costs a service says more than
 * the throughput, which the other tenants' load moves.
 */
function cpuSeconds(): Map<string, number> {
  const used = new Map<string, number>();
  const ours = new RegExp(`${repoRoot}/services/([a-z]+)/dist/main\\.js`);
  for (const pid of readdirSync("/proc").filter((entry) => /^\d+$/.test(entry))) {
    try {
      const service = ours.exec(readFileSync(`/proc/${pid}/cmdline`, "utf8"))?.[1];
      if (!service) continue;
      // The fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
      const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
      used.set(service, (used.get(service) ?? 0) + (Number(fields[11]) + Number(fields[12])) / 100);
    } catch {
      // The process ended meanwhile.
    }
  }
  return used;
}

/** CPU ms per 1,000 requests of each service between two readings, the busiest first. */
function cpuPerThousand(before: Map<string, number>, after: Map<string, number>, requests: number): string {
  return [...after]
    .map(([service, seconds]) => [service, ((seconds - (before.get(service) ?? 0)) * 1_000_000) / Math.max(1, requests)] as const)
    .sort((a, b) => b[1] - a[1])
    .map(([service, ms]) => `${service} ${Math.round(ms)}`)
    .join(", ");
}

/**
 * POST /v1/track with a public key, a new contact every 10 requests, as SPEC.md's hot path sees it:
 * page views, and one request in 100 a benchTriggerEvent. With `workflows`, the project has
 * listeningWorkflows' 20 enabled workflows, and each benchTriggerEvent starts one execution.
 */
async function track(gatewayUrl: string, connections: number, workflows = false): Promise<string> {
  const { publicKey, secretKey } = await benchProject(gatewayUrl);
  if (workflows) await listeningWorkflows(gatewayUrl, secretKey);
  let sent = 0;
  const before = cpuSeconds();
  const result = await load({
    url: `${gatewayUrl}/v1/track`,
    connections,
    requests: [
      {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${publicKey}` },
        setupRequest: (request) => {
          const contact = Math.floor(sent++ / 10);
          const event = sent % 100 === 0 ? benchTriggerEvent : "page.viewed";
          return {
            ...request,
            body: JSON.stringify({ email: `c${contact}@bench.test`, event, data: { plan: "pro", visits: sent } }),
          };
        },
      },
    ],
  });
  // The consumers lag the requests a little: their work on this run's events is counted once they drained.
  await new Promise((resolve) => setTimeout(resolve, 5_000));
  const cpu = cpuPerThousand(before, cpuSeconds(), sent);
  return `| POST /v1/track (gateway → contacts), new contact every 10 requests, 1 % ${benchTriggerEvent}${workflows ? "; 20 enabled workflows listening, so 1 % start an execution" : "; no workflows"} | ${connections} connections | ${Math.round(result.requests.average)} req/s | p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms | ${result["2xx"]} ok, ${result.non2xx} non-2xx, ${result.errors} errors; CPU ms per 1,000 requests (warm-up included, 5 s to drain): ${cpu} |`;
}

/** A 50,000-row CSV through POST /contacts/import, timed from upload to a completed job. */
async function csvImport(gatewayUrl: string, rows: number): Promise<string> {
  const { secretKey } = await benchProject(gatewayUrl);
  const csv = `email,first name,plan,score\n${Array.from({ length: rows }, (_, i) => `row${i}@import.test,Name ${i},pro,${i}`).join("\n")}\n`;
  const form = new FormData();
  form.append("file", new Blob([csv], { type: "text/csv" }), "bench.csv");
  const started = performance.now();
  const upload = await fetch(`${gatewayUrl}/contacts/import`, {
    method: "POST",
    headers: { authorization: `Bearer ${secretKey}` },
    body: form,
  });
  const { jobId } = (await upload.json()) as { jobId: string };
  for (;;) {
    const job = (await (
      await fetch(`${gatewayUrl}/contacts/import/${jobId}`, { headers: { authorization: `Bearer ${secretKey}` } })
    ).json()) as {
      status: string;
      imported: number;
    };
    if (job.status === "completed" || job.status === "failed") {
      const seconds = (performance.now() - started) / 1000;
      return `| CSV import, ${rows.toLocaleString("en")} rows (${(csv.length / 2 ** 20).toFixed(1)} MB) | one job | ${Math.round(job.imported / seconds)} rows/s | ${seconds.toFixed(1)} s in all | ${job.status}, ${job.imported} imported |`;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function rpc(name: string, baseUrl: string, concurrency: number): Promise<string> {
  const client = createClient(IdentityService, createRpcTransport({ baseUrl, connections: 4 }));
  const latencies: number[] = [];
  let errors = 0;
  const deadline = performance.now() + durationSeconds * 1_000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const started = performance.now();
        try {
          await client.getServiceInfo({});
          latencies.push(performance.now() - started);
        } catch {
          errors++;
        }
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const at = (q: number) => (latencies[Math.floor(q * (latencies.length - 1))] ?? 0).toFixed(1);
  return `| ${name} | ${concurrency} in flight, 4 HTTP/2 connections | ${Math.round(latencies.length / durationSeconds)} calls/s | p50 ${at(0.5)} ms, p99 ${at(0.99)} ms | ${latencies.length} ok, ${errors} errors |`;
}

const infra = await ensureInfrastructure({ root: repoRoot, log: (message) => console.error(`[infra] ${message}`) });
await prepareTemplateDatabase({ databaseUrl: infra.databaseUrl, migrate: migrateAllServices });
const database = await createTestDatabase(infra.databaseUrl);
const [dns, sink] = await Promise.all([startTestDnsServer(), startTestSmtpSink()]);
/** What the bench started besides the stack, stopped however the run ends. */
async function stopInfrastructure(): Promise<void> {
  await Promise.all([dns.stop(), sink.stop()]);
  await database.drop();
  await infra.stop();
}
// The per-project limits (1000 requests/min, 1000 emails/s) would measure the limiters, not the paths.
const stack = await startStack(
  { databaseUrl: database.databaseUrl, redisUrl: infra.redisUrl, kafkaBrokers: infra.kafkaBrokers },
  {
    RATE_LIMIT_PER_MINUTE: "1000000",
    // autocannon is one client address: the public-key share per address would measure the limiter too.
    PUBLIC_KEY_RATE_PER_MINUTE: "1000000",
    // Each run signs up from 127.0.0.1 on a Redis that remembers the hour across runs.
    SIGNUP_RATE_PER_HOUR: "1000000",
    PASSWORD_SCRYPT_LOG_N: "14",
    DNS_SERVERS: dns.address,
    SMTP_URL: sink.url,
    SEND_RATE_PER_SECOND: process.env.BENCH_SEND_RATE ?? "100000",
    SEND_PROJECT_RATE_PER_SECOND: "100000",
    // The sink takes any number of connections, as a relay that allows them does (the defaults, 20 and 100,
    // suit a relay that limits each client): on this busy machine each SMTP transaction waits on two event
    // loops, so more connections at once send more (docs/benchmarks.md, 2026-11-25).
    SMTP_MAX_CONNECTIONS: process.env.SMTP_MAX_CONNECTIONS ?? "50",
    SEND_CONCURRENCY: process.env.SEND_CONCURRENCY ?? "250",
    // Every bench recipient domain has no MX, so each would be a destination with the default limits of a real
    // mail server (docs/operations.md "Destinations"): the sink is one relay that takes any rate.
    SEND_DESTINATIONS: process.env.SEND_DESTINATIONS ?? '{"default": {"concurrency": 10000, "ratePerSecond": 1000000}}',
    // The same consumer groups in every run: a new group would start by reading every earlier run's
    // events (identity meters from the beginning of the topic), CPU the measured paths share.
    KAFKA_GROUP_PREFIX: "bench.",
    // The scale benchmark grows contacts from none to millions within the run: searches are measured a minute after,
    // when the hourly read of the trigrams most addresses share would not have come round yet.
    SEARCH_TRIGRAMS_INTERVAL_MS: "10000",
    // The webhooks benchmark's receiver listens on 127.0.0.1 over plain HTTP.
    WEBHOOK_ALLOW_HTTP: "true",
    WEBHOOK_ALLOWED_ADDRESSES: "127.0.0.1",
  },
  // A member of those groups that an earlier run left without leaving holds up the joins until its session lapses;
  // a machine shared with other work may need longer (BENCH_START_TIMEOUT_MS).
  Number(process.env.BENCH_START_TIMEOUT_MS ?? 120_000),
).catch(async (error: unknown) => {
  await stopInfrastructure();
  throw error;
});
/** `npm run bench -- track segments` runs only the named groups; no names runs them all. */
const chosen = process.argv.slice(2);
const wanted = (group: string) => chosen.length === 0 || chosen.includes(group);
/** What the pipeline benchmarks drive: the stack, its database, the DNS server and the SMTP sink. */
const target: WorkflowBenchTarget = {
  gatewayUrl: stack.gatewayUrl,
  deliveryUrl: stack.serviceUrls.delivery,
  databaseUrl: database.databaseUrl,
  dns,
  sink,
  project: () => benchProject(stack.gatewayUrl),
  load,
};
try {
  const rows: string[] = [];
  if (wanted("edge")) {
    rows.push(await http("GET /config (gateway only)", `${stack.gatewayUrl}/config`, 50));
    rows.push(await http("GET /health (gateway → 5 gRPC health checks)", `${stack.gatewayUrl}/health`, 50));
    rows.push(await rpc("GetServiceInfo, Connect binary, direct to identity", stack.serviceUrls.identity, 64));
  }
  if (wanted("track") || wanted("workflows")) {
    // Without and with workflows, alternated BENCH_TRACK_ROUNDS times: the machine's drift falls on both.
    for (let round = 0; round < Number(process.env.BENCH_TRACK_ROUNDS ?? 1); round++) {
      rows.push(await track(stack.gatewayUrl, 50));
      rows.push(await track(stack.gatewayUrl, 50, true));
    }
  }
  if (wanted("workflows")) {
    rows.push(await delayedEmails(target, Number(process.env.BENCH_WORKFLOW_EXECUTIONS ?? 10_000)));
  }
  if (wanted("import")) rows.push(await csvImport(stack.gatewayUrl, 50_000));
  if (wanted("dashboard")) rows.push(...(await dashboardFirstScreen(stack.gatewayUrl)));
  if (wanted("send") || wanted("verify") || wanted("stalls")) {
    if (wanted("verify")) rows.push(await verifyApi(target, 50));
    if (wanted("stalls")) {
      const stalls = await stallBenchmarks(target, { gateway: stack.metricsUrls.gateway, delivery: stack.metricsUrls.delivery });
      console.log(
        [
          "",
          "| stall payload | status | time | slowest GET /config meanwhile (count) | slowest open pixel, answered by delivery (count) | longest event-loop delay: gateway, delivery |",
          "|---|---|---|---|---|---|",
          ...stalls,
        ].join("\n"),
      );
    }
    if (wanted("send")) {
      const accepting = await sendApi(target, 50);
      rows.push(accepting.row);
      const count = Number(process.env.BENCH_DELIVERED_EMAILS ?? 50_000);
      if (count > 0) rows.push(await delivered(target, count, accepting.backlog));
    }
  }
  console.log(
    `\n${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${durationSeconds} s each\n`,
  );
  if (rows.length > 0) console.log(["| path | load | throughput | latency | outcome |", "|---|---|---|---|---|", ...rows].join("\n"));
  if (wanted("campaigns")) {
    const campaigns = await campaignBenchmarks(target, Number(process.env.BENCH_CAMPAIGN_RECIPIENTS ?? 100_000));
    console.log(["", "| campaign | measure | result | detail |", "|---|---|---|---|", ...campaigns.rows].join("\n"));
    console.log(`\n${campaigns.detail}`);
  }
  if (wanted("lanes")) {
    const lanes = await lanesBenchmarks(target, {
      large: Number(process.env.BENCH_LANES_LARGE_RECIPIENTS ?? 100_000),
      small: Number(process.env.BENCH_LANES_SMALL_RECIPIENTS ?? 2_000),
      probes: Number(process.env.BENCH_LANES_PROBES ?? 20),
    });
    console.log(["", "| lanes | measure | result | detail |", "|---|---|---|---|", ...lanes.rows].join("\n"));
    console.log(`\n${lanes.detail}`);
  }
  if (wanted("replicas")) {
    const replicas = await replicaBenchmarks(
      { ...target, stack },
      {
        emails: Number(process.env.BENCH_REPLICA_EMAILS ?? 20_000),
        tracks: Number(process.env.BENCH_REPLICA_TRACKS ?? 20_000),
        // e.g. `1` for one replica only, `1,2` for one then two.
        sequence: (process.env.BENCH_REPLICAS ?? "1,2,1").split(",").map((count) => (count.trim() === "2" ? 2 : 1)),
      },
    );
    console.log(
      [
        "",
        "| processes | emails | arrived at the sink | sent by each delivery (herald_email_dispatches_total) | delivered | CPU per email, stack | less the idle stack |",
        "|---|---|---|---|---|---|---|",
        ...replicas.sendRows,
        "",
        "| processes | POST /v1/track requests | events in the database | TrackEvents calls answered by each contacts | accepted | CPU per request, stack | less the idle stack |",
        "|---|---|---|---|---|---|---|",
        ...replicas.trackRows,
      ].join("\n"),
    );
    console.log(`\n${replicas.detail}`);
  }
  if (wanted("webhooks")) {
    const webhooks = await webhookBenchmarks(target, {
      rate: Number(process.env.BENCH_WEBHOOK_RATE ?? 1_000),
      endpoints: Number(process.env.BENCH_WEBHOOK_ENDPOINTS ?? 10),
      seconds: durationSeconds,
      cpuSeconds,
      autocannon,
    });
    console.log(["", "| webhooks | load | delivered | event to receiver | cost |", "|---|---|---|---|---|", ...webhooks.rows].join("\n"));
    console.log(`\n${webhooks.detail}`);
  }
  if (wanted("segments")) {
    const project = await benchProject(stack.gatewayUrl);
    const segments = await segmentBenchmarks({
      gatewayUrl: stack.gatewayUrl,
      contactsUrl: stack.serviceUrls.contacts,
      databaseUrl: database.databaseUrl,
      secretKey: project.secretKey,
      projectId: project.id,
    });
    console.log(["", "| segments | load | result | detail |", "|---|---|---|---|", ...segments.rows].join("\n"));
    console.log(`\nQuery plans:\n${segments.plans}`);
  }
  // Not in the default run: it grows the database to 10,000,000 contacts (BENCH_SCALE_SIZES) and takes most of an hour.
  if (chosen.includes("scale")) {
    const sizes = (process.env.BENCH_SCALE_SIZES ?? "1000000,10000000").split(",").map(Number);
    const scale = await scaleBenchmarks(
      {
        gatewayUrl: stack.gatewayUrl,
        contactsUrl: stack.serviceUrls.contacts,
        databaseUrl: database.databaseUrl,
        large: await benchProject(stack.gatewayUrl),
        load,
      },
      sizes,
    );
    console.log(["", "| scale | load | result | detail |", "|---|---|---|---|", ...scale].join("\n"));
  }
} finally {
  await stack.stop();
  await stopInfrastructure();
}
