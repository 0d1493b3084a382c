// Campaign benchmark (issue 21): a 100,000-recipient campaign, a ~3 KB body with two Liquid
// variables, fanned out by the campaigns service (audience streamed from contacts, rendered,
// enqueued in delivery in batches) and sent DKIM-signed into the SMTP sink.
import { readdir, readFile } from "node:fs/promises";
import os from "node:os";
import { repoRoot, type TestSmtpSink } from "@herald/testing";
import pg from "pg";
import { cpuSecondsOf } from "./process-cpu.ts";
import { type SendBenchTarget, verifiedDomain } from "./send.ts";

export interface CampaignBenchTarget extends SendBenchTarget {
  databaseUrl: string;
}

const recipientDomain = "campaign.bench";
const probeDomain = "probe.bench";

/** ~3 KB of HTML, two Liquid variables (firstName, plan) and one tracked link. */
const body = `<html><body><h1>Hello {{ firstName }},</h1>${"<p>Here is what changed this month, and what is coming next. We thought you would like to know first.</p>".repeat(26)}<p>You are on the {{ plan }} plan.</p><p><a href="https://example.com/news">Read more</a></p></body></html>`;

const stackServices = ["gateway", "identity", "contacts", "delivery", "campaigns", "automation"] as const;
type ProcessName = (typeof stackServices)[number] | "postgres";

/** CPU seconds each process has used so far, by pid (utime + stime of /proc/<pid>/stat). */
type CpuSample = Map<number, { name: ProcessName; seconds: number }>;

/**
 * The bench stack's processes (those running this checkout's services with this stack's PUBLIC_URL)
 * and the PostgreSQL backends serving the bench database. Kafka and Redis are left out: the broker
 * is shared with whatever else runs on the machine, and neither is on the fan-out's path.
 */
async function stackProcesses(gatewayUrl: string, client: pg.Client): Promise<Map<number, ProcessName>> {
  const found = new Map<number, ProcessName>();
  for (const entry of await readdir("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      const command = await readFile(`/proc/${pid}/cmdline`, "utf8");
      const name = stackServices.find((service) => command.includes(`${repoRoot}/services/${service}/dist/main.js`));
      if (!name) continue;
      const environment = await readFile(`/proc/${pid}/environ`, "utf8");
      if (environment.split("\0").includes(`PUBLIC_URL=${gatewayUrl}`)) found.set(pid, name);
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  const { rows } = await client.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = current_database()");
  for (const { pid } of rows) found.set(pid, "postgres");
  return found;
}

async function sampleCpu(processes: Map<number, ProcessName>): Promise<CpuSample> {
  const sample: CpuSample = new Map();
  await Promise.all(
    [...processes].map(async ([pid, name]) => {
      const seconds = await cpuSecondsOf(pid);
      if (seconds !== undefined) sample.set(pid, { name, seconds });
    }),
  );
  return sample;
}

/** CPU seconds used between two samples, by process name (a process born in between counts from zero). */
function cpuBetween(before: CpuSample, after: CpuSample): Record<ProcessName, number> {
  const used = Object.fromEntries([...stackServices, "postgres"].map((name) => [name, 0])) as Record<ProcessName, number>;
  for (const [pid, { name, seconds }] of after) used[name] += seconds - (before.get(pid)?.seconds ?? 0);
  return used;
}

const total = (used: Record<ProcessName, number>) => Object.values(used).reduce((sum, seconds) => sum + seconds, 0);

/** The arrivals at the sink to the campaign's recipients, counted from `from` (the sink's messages are in arrival order). */
function arrivalsSince(sink: TestSmtpSink, from: number): number {
  let count = 0;
  const messages = sink.messages();
  for (let index = from; index < messages.length; index++) if (messages[index]?.to[0]?.endsWith(`@${recipientDomain}`)) count++;
  return count;
}

async function rest<T>(target: CampaignBenchTarget, key: string, method: string, path: string, payload?: unknown): Promise<T> {
  const response = await fetch(`${target.gatewayUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(payload === undefined ? {} : { "content-type": "application/json" }) },
    ...(payload === undefined ? {} : { body: JSON.stringify(payload) }),
  });
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

const ms = (seconds: number) => (seconds * 1000).toFixed(3);

/**
 * Seeds `recipients` subscribed contacts straight into the contacts schema, creates the campaign
 * through the REST API and sends it, then follows it: the fan-out (until its audience is read to
 * the end), the sending (until SENT) and the counters (until sentCount reaches the recipients).
 * CPU is read from /proc for every process of the stack and the database's backends, per phase.
 * The fan-out's own CPU per recipient is estimated by taking off what the sending costs per
 * email (measured after the fan-out, when only sending runs) for the emails sent during it.
 */
export async function campaignBenchmarks(target: CampaignBenchTarget, recipients: number): Promise<{ rows: string[]; detail: string }> {
  const project = await target.project();
  const domain = await verifiedDomain(target, project.secretKey);
  const url = new URL(target.databaseUrl);
  url.searchParams.delete("schema");
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    await client.query(
      `INSERT INTO contacts.contacts (project_id, email, subscribed, data)
       SELECT $1::uuid, 'c' || n || '@${recipientDomain}', true,
         jsonb_build_object('firstName', 'Name' || n, 'plan', (ARRAY['free', 'starter', 'pro'])[1 + n % 3])
       FROM generate_series(1, $2::int) AS n`,
      [project.id, recipients],
    );
    await client.query("ANALYZE contacts.contacts");
    const campaign = await rest<{ data: { id: string } }>(target, project.secretKey, "POST", "/campaigns", {
      name: "Bench campaign",
      subject: "News for {{ firstName }}",
      body,
      from: `news@${domain}`,
      audienceType: "ALL",
    });
    const campaignId = campaign.data.id;
    const progress = async () =>
      (
        await client.query<{ status: string; total: number; done: boolean; sent: number }>(
          `SELECT status, total_recipients AS total, fanout_done AS done, sent_count AS sent FROM campaigns.campaigns WHERE id = $1::uuid`,
          [campaignId],
        )
      ).rows[0];

    const processes = await stackProcesses(target.gatewayUrl, client);
    const loadBefore = os.loadavg();
    const arrivedBefore = target.sink.messages().length;
    const atStart = await sampleCpu(processes);
    const started = performance.now();
    const elapsed = () => (performance.now() - started) / 1000;
    // The next message the sink takes is the campaign's first: earlier measurements' emails have all arrived.
    const firstArrival = target.sink.waitForMessages(arrivedBefore + 1, { timeoutMs: 30 * 60_000 }).then(
      () => elapsed(),
      () => undefined,
    );
    await rest(target, project.secretKey, "POST", `/campaigns/${campaignId}/send`, {});

    // One transactional email every 2 s through /v1/send from the campaign's first email on: how long it waits in the same queue.
    const probes: Array<{ to: string; at: number }> = [];
    let probing = true;
    const prober = firstArrival.then(async () => {
      while (probing) {
        const to = `p${probes.length}@${probeDomain}`;
        probes.push({ to, at: Date.now() });
        await rest(target, project.secretKey, "POST", "/v1/send", {
          to,
          from: `receipts@${domain}`,
          subject: "Receipt",
          body: "<p>Thanks</p>",
        });
        await new Promise((resolve) => setTimeout(resolve, 2_000));
      }
    });

    let fannedOut: { at: number; arrived: number; cpu: CpuSample } | undefined;
    let sent: { at: number; cpu: CpuSample } | undefined;
    let counted: { at: number; cpu: CpuSample } | undefined;
    const deadline = 60 * 60;
    while (!counted && elapsed() < deadline) {
      const now = await progress();
      if (!fannedOut && now?.done) {
        // Processes the fan-out started (new database connections) are counted from here on too.
        for (const [pid, name] of await stackProcesses(target.gatewayUrl, client)) processes.set(pid, name);
        fannedOut = { at: elapsed(), arrived: arrivalsSince(target.sink, arrivedBefore), cpu: await sampleCpu(processes) };
      }
      if (fannedOut && !sent && now?.status === "SENT") sent = { at: elapsed(), cpu: await sampleCpu(processes) };
      if (sent && (now?.sent ?? 0) >= recipients) counted = { at: elapsed(), cpu: await sampleCpu(processes) };
      if (now?.status === "CANCELLED") throw new Error("the bench campaign was cancelled");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    probing = false;
    await prober;
    const firstEmail = await firstArrival;
    if (!fannedOut || !sent || !counted || firstEmail === undefined) throw new Error(`the campaign did not finish within ${deadline} s`);
    const loadAfter = os.loadavg();
    const arrived = arrivalsSince(target.sink, arrivedBefore);
    const { rows: totals } = await client.query<{ total: number }>(
      "SELECT total_recipients AS total FROM campaigns.campaigns WHERE id = $1::uuid",
      [campaignId],
    );

    const fanOutCpu = cpuBetween(atStart, fannedOut.cpu);
    const sendingCpu = cpuBetween(fannedOut.cpu, counted.cpu);
    const sentAfterFanOut = recipients - fannedOut.arrived;
    const sendCostPerEmail = sentAfterFanOut > 0 ? total(sendingCpu) / sentAfterFanOut : 0;
    const fanOutPerRecipient = (total(fanOutCpu) - sendCostPerEmail * fannedOut.arrived) / recipients;
    const deliveredSeconds = sent.at - firstEmail;
    const probeArrivals = () => target.sink.messages().filter((message) => message.to[0]?.endsWith(`@${probeDomain}`));
    const probeDeadline = Date.now() + 10 * 60_000;
    while (probeArrivals().length < probes.length && Date.now() < probeDeadline) await new Promise((resolve) => setTimeout(resolve, 250));
    const arrivalOf = new Map(probeArrivals().map((message) => [message.to[0], Date.parse(message.receivedAt)]));
    const waits = probes.flatMap((probe) => {
      const arrivedAt = arrivalOf.get(probe.to);
      return arrivedAt === undefined ? [] : [(arrivedAt - probe.at) / 1000];
    });
    waits.sort((a, b) => a - b);
    const by = (used: Record<ProcessName, number>) =>
      Object.entries(used)
        .filter(([, seconds]) => seconds > 0)
        .map(([name, seconds]) => `${name} ${seconds.toFixed(1)} s`)
        .join(", ");

    const rows = [
      `| ${recipients.toLocaleString("en")}-recipient campaign, ~3 KB body, 2 Liquid variables, audience ALL | time to the first email | ${firstEmail.toFixed(2)} s | from POST /campaigns/:id/send to the first arrival at the sink |`,
      `| fan-out (stream, render, enqueue) | rate | ${Math.round(recipients / fannedOut.at).toLocaleString("en")} recipients/s | audience read to the end at ${fannedOut.at.toFixed(1)} s; ${fannedOut.arrived.toLocaleString("en")} emails already sent by then |`,
      `| fan-out CPU per recipient, all processes | estimate | ${ms(fanOutPerRecipient)} ms | ${total(fanOutCpu).toFixed(1)} CPU s during the fan-out, less ${ms(sendCostPerEmail)} ms per email sent meanwhile; goal ≤ 0.2 ms |`,
      `| fan-out CPU per recipient, campaigns process alone | measured | ${ms(fanOutCpu.campaigns / recipients)} ms | streaming client, rendering, enqueue client |`,
      `| sending after the fan-out | CPU per email, all processes | ${ms(sendCostPerEmail)} ms | ${total(sendingCpu).toFixed(1)} CPU s for ${sentAfterFanOut.toLocaleString("en")} emails, counters included |`,
      `| delivered | rate | ${Math.round(arrived / deliveredSeconds).toLocaleString("en")} emails/s | first arrival to SENT; ${arrived.toLocaleString("en")} arrived, totalRecipients ${totals[0]?.total} |`,
      `| /v1/send beside the campaign | time to arrive | median ${(waits[Math.floor(waits.length / 2)] ?? 0).toFixed(1)} s, worst ${(waits.at(-1) ?? 0).toFixed(1)} s | one transactional email every 2 s while the campaign ran; ${waits.length} of ${probes.length} arrived |`,
      `| time until SENT | | ${sent.at.toFixed(1)} s | counters complete (sentCount = ${recipients.toLocaleString("en")}) at ${counted.at.toFixed(1)} s |`,
    ];
    const detail = [
      `CPU during the fan-out (${fannedOut.at.toFixed(1)} s): ${by(fanOutCpu)}.`,
      `CPU from the fan-out's end until the counters were complete (${(counted.at - fannedOut.at).toFixed(1)} s): ${by(sendingCpu)}.`,
      `Load average (1, 5, 15 min) before: ${loadBefore.map((load) => load.toFixed(2)).join(", ")}; after: ${loadAfter.map((load) => load.toFixed(2)).join(", ")}.`,
    ].join("\n");
    return { rows, detail };
  } finally {
    await client.end();
  }
}
