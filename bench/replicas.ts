// Replicas benchmark (issue: production packaging, "Scaling, measured"): the same load on one process of
// every service and the gateway, on two of each against the same database, Redis and Kafka, and on one
// again. With two, every email must still be sent once and every tracked event recorded once, and both
// replicas must take part. CPU is summed over every process of the stack and the bench database's backends.
import { readdir, readFile } from "node:fs/promises";
import os from "node:os";
import { type Stack, type StackProcesses, scrape } from "@herald/testing";
import autocannon from "autocannon";
import pg from "pg";
import { cpuSecondsOf, threadCpuSecondsOf } from "./process-cpu.ts";
import { receiptHtml, type SendBenchTarget, verifiedDomain } from "./send.ts";

export interface ReplicasBenchTarget extends SendBenchTarget {
  stack: Stack;
  databaseUrl: string;
  project(): Promise<{ id: string; secretKey: string; publicKey: string }>;
}

/** One process of every service and a gateway in front of them, named A, B, … */
interface Replica {
  letter: string;
  processes: StackProcesses;
}

/** Total connections of every load, split evenly over the gateways. */
const connections = 50;
const warmupEmails = 1_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Whose CPU counts. `stack`: the Node processes of the replicas and the PostgreSQL backends of the bench
 * database. `shared`: the servers other work on the machine uses too (the Kafka broker, Redis, PostgreSQL's
 * own processes and other databases' backends), reported apart. The bench's own process (the load generator
 * and the SMTP sink, standing in for the relay) is neither. `threads`: each delivery process's threads by
 * kind (its event loop, its worker threads, which render and build, and V8's helpers), a part of its
 * `stack` figure reported apart and never added to it (workerThreadsMs).
 */
type Role = "stack" | "shared" | "threads";
/** CPU seconds used so far, by process id, and by `<pid>/<tid>` for delivery's threads. */
type CpuSample = Map<string, { name: string; role: Role; seconds: number }>;

/** What each other process of the machine is to the bench (undefined: not counted), read once per pid. */
const classified = new Map<number, { name: string; role: Role } | undefined>();

async function classify(pid: number, database: { name: string; client: pg.Client }): Promise<{ name: string; role: Role } | undefined> {
  const command = (await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "")).split("\0").join(" ");
  // A backend's title: "postgres: 15/main: <user> <database> <client> <state>". Each service names its connections
  // (herald-<schema>, @herald/db), so that the database's CPU is told by service.
  if (command.startsWith("postgres:") && command.includes(` ${database.name} `)) {
    const { rows } = await database.client.query<{ name: string }>("SELECT application_name AS name FROM pg_stat_activity WHERE pid = $1", [
      pid,
    ]);
    const service = rows[0]?.name.startsWith("herald-") ? rows[0].name.slice("herald-".length) : "the bench";
    return { name: `postgres (${service})`, role: "stack" };
  }
  if (command.startsWith("postgres:") || /\/postgres -D /.test(command)) return { name: "postgres, other", role: "shared" };
  if (command.includes(" kafka.Kafka ")) return { name: "kafka", role: "shared" };
  if (command.startsWith("redis-server")) return { name: "redis", role: "shared" };
  return undefined;
}

async function sampleCpu(replicas: Replica[], database: { name: string; client: pg.Client }): Promise<CpuSample> {
  const named = new Map<number, { name: string; role: Role }>();
  /** Each delivery process's pid and its replica's letter, whose threads are read apart. */
  const deliveries: Array<{ pid: number; letter: string }> = [];
  for (const { letter, processes } of replicas) {
    for (const child of processes.processes) {
      if (child.pid === undefined) continue;
      named.set(child.pid, { name: `${child.name} ${letter}`, role: "stack" });
      if (child.name === "delivery") deliveries.push({ pid: child.pid, letter });
    }
  }
  for (const entry of await readdir("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || named.has(pid)) continue;
    if (!classified.has(pid)) classified.set(pid, await classify(pid, database));
    const known = classified.get(pid);
    if (known) named.set(pid, known);
  }
  const sample: CpuSample = new Map();
  await Promise.all(
    [...named].map(async ([pid, known]) => {
      const seconds = await cpuSecondsOf(pid);
      if (seconds !== undefined) sample.set(String(pid), { ...known, seconds });
    }),
  );
  await Promise.all(
    deliveries.map(async ({ pid, letter }) => {
      for (const [tid, { kind, seconds }] of await threadCpuSecondsOf(pid)) {
        sample.set(`${pid}/${tid}`, { name: `${kind}\t${letter}`, role: "threads", seconds });
      }
    }),
  );
  return sample;
}

/** CPU seconds by process name, those of the stack and the shared servers apart. */
interface CpuUsage {
  stack: Map<string, number>;
  shared: Map<string, number>;
  /** Delivery's threads by kind, a part of `stack`'s delivery. */
  threads: Map<string, number>;
  /** The bench's own process: the load generator and the SMTP sink. */
  bench: number;
  seconds: number;
}

const sum = (used: Map<string, number>) => [...used.values()].reduce((total, seconds) => total + seconds, 0);

/**
 * Reads the processes' CPU every second until stop(): a process that ends meanwhile (a pool's idle
 * backend) keeps what it used until its last reading, and one born meanwhile counts from zero.
 */
async function startCpuMeter(read: () => Promise<CpuSample>): Promise<{ stop(): Promise<CpuUsage> }> {
  const started = performance.now();
  const benchBefore = process.cpuUsage();
  const first = await read();
  const last: CpuSample = new Map(first);
  let metering = true;
  const poller = (async () => {
    for (;;) {
      await sleep(1_000);
      if (!metering) return;
      for (const [key, used] of await read()) last.set(key, used);
    }
  })();
  return {
    async stop() {
      metering = false;
      await poller;
      for (const [key, used] of await read()) last.set(key, used);
      const bench = process.cpuUsage(benchBefore);
      const usage: CpuUsage = {
        stack: new Map(),
        shared: new Map(),
        threads: new Map(),
        bench: (bench.user + bench.system) / 1e6,
        seconds: (performance.now() - started) / 1000,
      };
      for (const [key, { name, role, seconds }] of last) {
        const used = seconds - (first.get(key)?.seconds ?? 0);
        usage[role].set(name, (usage[role].get(name) ?? 0) + used);
      }
      return usage;
    },
  };
}

/** Waits until the stack's processes use at most `rate` CPU seconds a second over 2 s (Kafka's consumers and the relays drained), at most a minute. */
async function settle(read: () => Promise<CpuSample>, rate: number): Promise<void> {
  const deadline = performance.now() + 60_000;
  while (performance.now() < deadline) {
    const meter = await startCpuMeter(read);
    await sleep(2_000);
    const usage = await meter.stop();
    if (sum(usage.stack) / usage.seconds <= rate) return;
  }
}

/** The sum of a counter's samples with these labels at a process's METRICS_PORT (0 before its first increment). */
async function counter(metricsUrl: string, name: string, labels: Record<string, string>): Promise<number> {
  return (await scrape(metricsUrl)).value(name, labels) ?? 0;
}

const trackCalls = { grpc_method: "TrackEvents", grpc_code: "OK" };

/** What one replica count measured. */
export interface ReplicaMeasurement {
  replicas: number;
  /** The stack's CPU seconds a second with nothing to do, over 10 s before the loads. */
  idleRate: number;
  idle: CpuUsage;
  /** The machine's load average (1 min) before and after. */
  load: [number, number];
  send: {
    requested: number;
    accepted: number[];
    arrived: number;
    sentBy: number[];
    otherOutcomes: number;
    duplicates: number;
    missing: number;
    repeatedMessageIds: number;
    unsentInQueue: number;
    /** From the first request to the last answer of POST /v1/send. */
    acceptSeconds: number;
    /** From the first request to the last arrival at the sink. */
    seconds: number;
    cpu: CpuUsage;
  };
  /** Unset when BENCH_REPLICA_TRACKS is 0. */
  track?: {
    requested: number;
    accepted: number[];
    failed: number;
    callsBy: number[];
    recorded: number;
    distinct: number;
    seconds: number;
    cpu: CpuUsage;
  };
}

/**
 * `count` POSTs to `path` with `key`, spread evenly over the gateways (connections too), the nth with `bodyOf(n)`;
 * answers the 2xx of each gateway and the refused or failed, and hands each 2xx answer's body to `onAccepted`.
 */
async function postOverGateways(
  replicas: Replica[],
  options: { path: string; key: string; count: number; bodyOf: (sequence: number) => unknown; onAccepted?: (body: string) => void },
): Promise<{ accepted: number[]; failed: number }> {
  let next = 0;
  let failed = 0;
  const accepted = await Promise.all(
    replicas.map(async ({ processes }, index) => {
      let ok = 0;
      const result = await autocannon({
        url: `${processes.gatewayUrl}${options.path}`,
        connections: connections / replicas.length,
        pipelining: 1,
        ...(process.env.BENCH_REPLICA_RATE ? { overallRate: Number(process.env.BENCH_REPLICA_RATE) } : {}),
        amount: Math.floor(options.count / replicas.length) + (index < options.count % replicas.length ? 1 : 0),
        requests: [
          {
            method: "POST",
            headers: { "content-type": "application/json", authorization: `Bearer ${options.key}` },
            setupRequest: (request) => ({ ...request, body: JSON.stringify(options.bodyOf(next++)) }),
            onResponse: (status, body) => {
              if (status < 200 || status >= 300) return;
              ok++;
              options.onAccepted?.(body);
            },
          },
        ],
      });
      failed += result.non2xx + result.errors;
      return ok;
    }),
  );
  return { accepted, failed };
}

/**
 * POST /v1/send of `count` ~3 KB emails, each to its own recipient, spread over the gateways (each calls
 * its own delivery), sent by every delivery's dispatcher into the sink: each recipient must get one message,
 * no Message-ID may come twice, and each delivery's herald_email_dispatches_total says what it sent.
 */
async function sendEmails(
  replicas: Replica[],
  count: number,
  recipientDomain: string,
  secretKey: string,
  from: string,
): Promise<{ accepted: Set<string>; perGateway: number[] }> {
  const accepted = new Set<string>();
  const { accepted: perGateway } = await postOverGateways(replicas, {
    path: "/v1/send",
    key: secretKey,
    count,
    bodyOf: (sent) => ({
      to: `r${sent}@${recipientDomain}`,
      from,
      subject: "Your receipt {{order}}",
      body: receiptHtml,
      data: { order: { value: `A-${sent}`, persistent: false }, plan: "pro" },
    }),
    onAccepted: (body) => {
      const answer = JSON.parse(body) as { data: { emails: Array<{ contact: { email: string } }> } };
      for (const email of answer.data.emails) accepted.add(email.contact.email);
    },
  });
  return { accepted, perGateway };
}

/** The messages to `@<domain>` recipients so far. */
const messagesTo = (target: ReplicasBenchTarget, domain: string) =>
  target.sink.messages().filter((message) => message.to[0]?.endsWith(`@${domain}`));

async function waitForArrivals(target: ReplicasBenchTarget, domain: string, count: number): Promise<void> {
  const deadline = performance.now() + 15 * 60_000;
  while (messagesTo(target, domain).length < count && performance.now() < deadline) await sleep(250);
}

async function measureSend(
  target: ReplicasBenchTarget,
  replicas: Replica[],
  count: number,
  read: () => Promise<CpuSample>,
  idleRate: number,
  client: pg.Client,
  warmed: { projectId: string; secretKey: string; from: string },
): Promise<ReplicaMeasurement["send"]> {
  const recipientDomain = `replicas-${replicas.length}-${warmed.projectId.slice(0, 8)}.bench`;
  const sentOf = () =>
    Promise.all(replicas.map(({ processes }) => counter(processes.metricsUrls.delivery, "herald_email_dispatches_total", {})));
  const sentOnlyOf = () =>
    Promise.all(
      replicas.map(({ processes }) => counter(processes.metricsUrls.delivery, "herald_email_dispatches_total", { outcome: "sent" })),
    );
  const [allBefore, sentBefore] = await Promise.all([sentOf(), sentOnlyOf()]);
  const meter = await startCpuMeter(read);
  const started = performance.now();
  const { accepted, perGateway } = await sendEmails(replicas, count, recipientDomain, warmed.secretKey, warmed.from);
  const acceptSeconds = (performance.now() - started) / 1000;
  await waitForArrivals(target, recipientDomain, accepted.size);
  const seconds = (performance.now() - started) / 1000;
  // The email-activity consumers (contacts, campaigns, automation, identity) finish their share of the work.
  await settle(read, idleRate * 1.5 + 0.02);
  const cpu = await meter.stop();
  const [allAfter, sentAfter] = await Promise.all([sentOf(), sentOnlyOf()]);
  const messages = messagesTo(target, recipientDomain);
  const byRecipient = new Map<string, number>();
  for (const message of messages) byRecipient.set(message.to[0] ?? "", (byRecipient.get(message.to[0] ?? "") ?? 0) + 1);
  const messageIds = new Set(messages.map((message) => /^message-id:\s*(\S+)/im.exec(message.raw)?.[1]));
  const { rows } = await client.query<{ unsent: number }>(
    "SELECT count(*)::int AS unsent FROM delivery.emails WHERE project_id = $1::uuid AND status <> 'SENT'",
    [warmed.projectId],
  );
  const sentBy = sentAfter.map((after, index) => after - (sentBefore[index] ?? 0));
  const attempts = allAfter.map((after, index) => after - (allBefore[index] ?? 0));
  return {
    requested: count,
    accepted: perGateway,
    arrived: messages.length,
    sentBy,
    otherOutcomes: attempts.reduce((a, b) => a + b, 0) - sentBy.reduce((a, b) => a + b, 0),
    duplicates: messages.length - byRecipient.size,
    missing: [...accepted].filter((recipient) => !byRecipient.has(recipient)).length,
    repeatedMessageIds: messages.length - messageIds.size,
    unsentInQueue: rows[0]?.unsent ?? 0,
    acceptSeconds,
    seconds,
    cpu,
  };
}

/** POST /v1/track with the public key, `count` requests over the gateways, a new contact every 10; answers the 2xx per gateway. */
const track = (replicas: Replica[], publicKey: string, event: string, count: number) =>
  postOverGateways(replicas, {
    path: "/v1/track",
    key: publicKey,
    count,
    bodyOf: (sequence) => ({ email: `${event}-${Math.floor(sequence / 10)}@replicas.bench`, event, data: { plan: "pro", sequence } }),
  });

async function measureTrack(
  target: ReplicasBenchTarget,
  replicas: Replica[],
  count: number,
  read: () => Promise<CpuSample>,
  idleRate: number,
  client: pg.Client,
): Promise<ReplicaMeasurement["track"]> {
  const project = await target.project();
  await track(replicas, project.publicKey, "page.warmed", Math.min(count, 5_000));
  await settle(read, idleRate * 1.5 + 0.02);
  const callsOf = () =>
    Promise.all(replicas.map(({ processes }) => counter(processes.metricsUrls.contacts, "grpc_server_handled_total", trackCalls)));
  const callsBefore = await callsOf();
  const meter = await startCpuMeter(read);
  const started = performance.now();
  const { accepted, failed } = await track(replicas, project.publicKey, "page.viewed", count);
  const seconds = (performance.now() - started) / 1000;
  // automation consumes every tracked event from Kafka: its share counts too.
  await settle(read, idleRate * 1.5 + 0.02);
  const cpu = await meter.stop();
  const callsAfter = await callsOf();
  const { rows } = await client.query<{ recorded: number; distinct: number }>(
    `SELECT count(*)::int AS recorded, count(DISTINCT data->>'sequence')::int AS distinct
     FROM contacts.events WHERE project_id = $1::uuid AND name = 'page.viewed'`,
    [project.id],
  );
  return {
    requested: count,
    accepted,
    failed,
    callsBy: callsAfter.map((after, index) => after - (callsBefore[index] ?? 0)),
    recorded: rows[0]?.recorded ?? 0,
    distinct: rows[0]?.distinct ?? 0,
    seconds,
    cpu,
  };
}

/** One replica count: warm-up, the stack's idle CPU, then the emails and the tracked events. */
async function measure(
  target: ReplicasBenchTarget,
  replicas: Replica[],
  counts: { emails: number; tracks: number },
  client: pg.Client,
  databaseName: string,
): Promise<ReplicaMeasurement> {
  const read = () => sampleCpu(replicas, { name: databaseName, client });
  const loadBefore = os.loadavg()[0] ?? 0;
  const project = await target.project();
  const domain = await verifiedDomain(target, project.secretKey);
  const warmed = { projectId: project.id, secretKey: project.secretKey, from: `receipts@${domain}` };
  // Every process's code paths, pools and connections warm, the new replicas' included.
  const warmupDomain = `warm-${replicas.length}-${project.id.slice(0, 8)}.bench`;
  const warm = await sendEmails(replicas, warmupEmails, warmupDomain, warmed.secretKey, warmed.from);
  await waitForArrivals(target, warmupDomain, warm.accepted.size);
  await settle(read, 0.3);
  const idle = await startCpuMeter(read);
  await sleep(10_000);
  const idleUsage = await idle.stop();
  const idleRate = sum(idleUsage.stack) / idleUsage.seconds;
  const send = await measureSend(target, replicas, counts.emails, read, idleRate, client, warmed);
  const track = counts.tracks > 0 ? await measureTrack(target, replicas, counts.tracks, read, idleRate, client) : undefined;
  return { replicas: replicas.length, idleRate, idle: idleUsage, load: [loadBefore, os.loadavg()[0] ?? 0], send, track };
}

const int = (value: number) => Math.round(value).toLocaleString("en");
const letters = (values: number[]) => values.map((value, index) => `${String.fromCharCode(65 + index)} ${int(value)}`).join(", ");
/** CPU seconds by process, the busiest first; with `per`, CPU ms per second of it. */
const byProcess = (used: Map<string, number>, per?: number) =>
  [...used]
    .sort((a, b) => b[1] - a[1])
    .map(([name, seconds]) => `${name} ${per ? Math.round((seconds * 1000) / per) : seconds.toFixed(1)}`)
    .join(", ");

/** Delivery's threads (named `<kind>\t<letter>`), CPU ms an email: each kind over every replica, then each replica's part. */
function threadsPerEmail(threads: Map<string, number>, emails: number): string {
  const ms = (seconds: number) => ((seconds * 1000) / Math.max(1, emails)).toFixed(2);
  const kinds = new Map<string, Array<[string, number]>>();
  for (const [name, seconds] of threads) {
    const [kind = name, letter = ""] = name.split("\t");
    kinds.set(kind, [...(kinds.get(kind) ?? []), [letter, seconds]]);
  }
  return [...kinds]
    .sort((a, b) => a[0].localeCompare(b[0]))
    .map(([kind, parts]) => {
      const total = ms(parts.reduce((sum, [, seconds]) => sum + seconds, 0));
      return parts.length < 2
        ? `${kind} ${total}`
        : `${kind} ${total} (${parts
            .sort()
            .map(([letter, seconds]) => `${letter} ${ms(seconds)}`)
            .join(", ")})`;
    })
    .join(", ");
}

/**
 * Delivery's worker threads' CPU ms an email. They render and build every email, the same work at one replica and at
 * two, so the stack's CPU over theirs is a measure that the machine's speed, which moves from run to run and within
 * one, moves much less than the stack's ms an email (docs/benchmarks.md, 2026-12-01 (later)).
 */
const workerThreadsMs = ({ cpu, arrived }: ReplicaMeasurement["send"]) =>
  ([...cpu.threads].filter(([name]) => name.startsWith("worker threads")).reduce((total, [, seconds]) => total + seconds, 0) * 1000) /
  Math.max(1, arrived);

/**
 * The loads on one replica of every process, on two, and on one again: rows of the emails' table, of the
 * tracked events' table, and the detail (CPU by process, the shared servers, the machine's load).
 */
export async function replicaBenchmarks(
  target: ReplicasBenchTarget,
  counts: { emails: number; tracks: number; sequence?: Array<1 | 2> },
): Promise<{ sendRows: string[]; trackRows: string[]; detail: string }> {
  const url = new URL(target.databaseUrl);
  url.searchParams.delete("schema");
  const databaseName = url.pathname.slice(1);
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  const measured: ReplicaMeasurement[] = [];
  try {
    const first: Replica = { letter: "A", processes: target.stack };
    // By default one, two, then one again: what the machine's other tenants changed meanwhile shows between the first and the last.
    for (const replicas of counts.sequence ?? [1, 2, 1]) {
      if (replicas === 1) {
        measured.push(await measure(target, [first], counts, client, databaseName));
        continue;
      }
      const second = await target.stack.addReplicas();
      try {
        measured.push(await measure(target, [first, { letter: "B", processes: second }], counts, client, databaseName));
      } finally {
        await second.stop();
      }
    }
  } finally {
    await client.end();
  }
  const total = (values: number[]) => values.reduce((a, b) => a + b, 0);
  /** CPU ms per unit of work: the stack's, and the stack's less what it uses idle over the same time. */
  const perUnit = (cpu: CpuUsage, idleRate: number, count: number) => ({
    gross: (sum(cpu.stack) * 1000) / Math.max(1, count),
    net: ((sum(cpu.stack) - idleRate * cpu.seconds) * 1000) / Math.max(1, count),
    shared: (sum(cpu.shared) * 1000) / Math.max(1, count),
  });
  const sendRows = measured.map(({ replicas, idleRate, send }) => {
    const cost = perUnit(send.cpu, idleRate, send.arrived);
    const once = send.duplicates === 0 && send.missing === 0 && send.repeatedMessageIds === 0 && send.unsentInQueue === 0;
    return `| ${replicas} of each | ${int(send.requested)} via POST /v1/send; 2xx by gateway ${letters(send.accepted)} (all answered at ${send.acceptSeconds.toFixed(1)} s) | ${int(send.arrived)}, ${once ? "each once" : "NOT each once"}: ${send.duplicates} duplicates, ${send.missing} missing, ${send.repeatedMessageIds} repeated Message-IDs, ${send.unsentInQueue} not SENT | ${letters(send.sentBy)}${send.otherOutcomes ? ` (+${send.otherOutcomes} other outcomes)` : ""} | ${int(send.arrived / send.seconds)} emails/s (last arrival at ${send.seconds.toFixed(1)} s) | ${cost.gross.toFixed(2)} ms | ${cost.net.toFixed(2)} ms |`;
  });
  const trackRows = measured.flatMap(({ replicas, idleRate, track }) => {
    if (!track) return [];
    const accepted = total(track.accepted);
    const cost = perUnit(track.cpu, idleRate, accepted);
    const once = track.recorded === accepted && track.distinct === track.recorded;
    return `| ${replicas} of each | ${int(track.requested)}; 2xx by gateway ${letters(track.accepted)}; ${track.failed} failed | ${int(track.recorded)} recorded, ${int(track.distinct)} distinct: ${once ? "each accepted event once" : "NOT each once"} | ${letters(track.callsBy)} | ${int(accepted / track.seconds)} req/s (${track.seconds.toFixed(1)} s) | ${cost.gross.toFixed(3)} ms | ${cost.net.toFixed(3)} ms |`;
  });
  const detail = measured.flatMap(({ replicas, idleRate, idle, load, send, track }) => {
    const email = perUnit(send.cpu, idleRate, send.arrived);
    const worker = workerThreadsMs(send);
    const event = track && perUnit(track.cpu, idleRate, total(track.accepted));
    return [
      `${replicas} of each (load average ${load[0].toFixed(1)} before, ${load[1].toFixed(1)} after): idle, the stack used ${idleRate.toFixed(3)} CPU s a second (${byProcess(idle.stack, idle.seconds)} CPU ms a second).`,
      `- emails, CPU s from the first request until the consumers drained (${send.cpu.seconds.toFixed(1)} s): ${byProcess(send.cpu.stack)}. Shared servers: ${byProcess(send.cpu.shared)} (${email.shared.toFixed(2)} ms an email). The bench process (load generator and SMTP sink): ${send.cpu.bench.toFixed(1)}.`,
      ...(track && event
        ? [
            `- tracked events, CPU s (${track.cpu.seconds.toFixed(1)} s): ${byProcess(track.cpu.stack)}. Shared servers: ${byProcess(track.cpu.shared)} (${event.shared.toFixed(3)} ms a request). The bench process: ${track.cpu.bench.toFixed(1)}.`,
          ]
        : []),
      `- delivery's threads, CPU ms an email: ${threadsPerEmail(send.cpu.threads, send.arrived)}${worker > 0 ? `. The stack less idle used ${(email.net / worker).toFixed(2)} times the worker threads' CPU` : ""}.`,
      `- one core at the stack's cost less idle: ${int(1000 / email.net)} emails/s${event ? `, or ${int(1000 / event.net)} tracked events/s` : ""}.`,
    ];
  });
  return { sendRows, trackRows, detail: detail.join("\n") };
}
