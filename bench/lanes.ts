// Lanes benchmark (issue 29): project A's large campaign is flowing; project B and project A each send
// transactional emails through POST /v1/send, one every 2 s, timed from the call to the SMTP sink; then project B
// starts a small campaign while A's still sends, and B's share of the delivered rate while both run is measured.
import os from "node:os";
import type { TestSmtpSink } from "@herald/testing";
import pg from "pg";
import { type SendBenchTarget, verifiedDomain } from "./send.ts";

export interface LanesBenchTarget extends SendBenchTarget {
  databaseUrl: string;
  project(): Promise<{ id: string; secretKey: string }>;
}

const domainOf = { a: "a.lanes.bench", b: "b.lanes.bench", probe: "probe.lanes.bench" } as const;

async function rest<T>(target: LanesBenchTarget, key: string, method: string, path: string, payload?: unknown): Promise<T> {
  const response = await fetch(`${target.gatewayUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(payload === undefined ? {} : { "content-type": "application/json" }) },
    ...(payload === undefined ? {} : { body: JSON.stringify(payload) }),
  });
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

/** Messages at the sink whose recipient is at `domain`, from the sink's `from`-th message on. */
const arrivals = (sink: TestSmtpSink, domain: string, from = 0) =>
  sink
    .messages()
    .slice(from)
    .filter((message) => message.to[0]?.endsWith(`@${domain}`));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;

/** A campaign to every subscribed contact of the project (seeded straight into contacts), sent at once. */
async function startCampaign(
  target: LanesBenchTarget,
  client: pg.Client,
  project: { id: string; secretKey: string },
  domain: string,
  recipientDomain: string,
  recipients: number,
) {
  await client.query(
    `INSERT INTO contacts.contacts (project_id, email, subscribed, data)
     SELECT $1::uuid, 'c' || n || '@${recipientDomain}', true, jsonb_build_object('firstName', 'Name' || n)
     FROM generate_series(1, $2::int) AS n`,
    [project.id, recipients],
  );
  const campaign = await rest<{ data: { id: string } }>(target, project.secretKey, "POST", "/campaigns", {
    name: `Lanes ${recipientDomain}`,
    subject: "News for {{ firstName }}",
    body: `<p>Hello {{ firstName }}</p>${"<p>What changed this month.</p>".repeat(20)}`,
    from: `news@${domain}`,
    audienceType: "ALL",
  });
  return campaign.data.id;
}

export async function lanesBenchmarks(
  target: LanesBenchTarget,
  options: { large: number; small: number; probes: number },
): Promise<{ rows: string[]; detail: string }> {
  const [a, b] = [await target.project(), await target.project()];
  const [domainA, domainB] = [await verifiedDomain(target, a.secretKey), await verifiedDomain(target, b.secretKey)];
  const url = new URL(target.databaseUrl);
  url.searchParams.delete("schema");
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const statusOf = async (id: string) =>
      (await client.query<{ status: string }>("SELECT status FROM campaigns.campaigns WHERE id = $1::uuid", [id])).rows[0]?.status;
    const loadBefore = os.loadavg();
    const from = target.sink.messages().length;
    const campaignA = await startCampaign(target, client, a, domainA, domainOf.a, options.large);
    await client.query("ANALYZE contacts.contacts");
    await rest(target, a.secretKey, "POST", `/campaigns/${campaignA}/send`, {});
    // Flowing: a few hundred of A's emails at the sink.
    while (arrivals(target.sink, domainOf.a, from).length < Math.min(500, options.large / 10)) await sleep(100);

    // B and A each send one /v1/send email every 2 s.
    const probes: Array<{ to: string; at: number; project: "a" | "b" }> = [];
    for (let round = 0; round < options.probes; round++) {
      for (const [name, project, domain] of [
        ["b", b, domainB],
        ["a", a, domainA],
      ] as const) {
        const to = `${name}${round}-${Date.now()}@${domainOf.probe}`;
        probes.push({ to, at: Date.now(), project: name });
        await rest(target, project.secretKey, "POST", "/v1/send", {
          to,
          from: `receipts@${domain}`,
          subject: "Receipt",
          body: "<p>Thanks</p>",
        });
      }
      await sleep(2_000);
    }
    const probeDeadline = Date.now() + 10 * 60_000;
    while (arrivals(target.sink, domainOf.probe, from).length < probes.length && Date.now() < probeDeadline) await sleep(250);
    const arrivedAt = new Map(
      arrivals(target.sink, domainOf.probe, from).map((message) => [message.to[0], Date.parse(message.receivedAt)]),
    );
    const waits = (project: "a" | "b" | "both") =>
      probes
        .filter((probe) => project === "both" || probe.project === project)
        .flatMap((probe) => {
          const at = arrivedAt.get(probe.to);
          return at === undefined ? [] : [(at - probe.at) / 1000];
        })
        .sort((x, y) => x - y);

    // B's campaign while A's still sends.
    const aBeforeB = arrivals(target.sink, domainOf.a, from).length;
    const campaignB = await startCampaign(target, client, b, domainB, domainOf.b, options.small);
    await client.query("ANALYZE contacts.contacts");
    const bStarted = Date.now();
    await rest(target, b.secretKey, "POST", `/campaigns/${campaignB}/send`, {});
    let bFirst: number | undefined;
    let bSentAt: number | undefined;
    let aSentAt: number | undefined;
    let aAtBFirst = 0;
    let aAtBLast = 0;
    const deadline = Date.now() + 60 * 60_000;
    while ((bSentAt === undefined || aSentAt === undefined) && Date.now() < deadline) {
      const bArrived = arrivals(target.sink, domainOf.b, from).length;
      if (bFirst === undefined && bArrived > 0) {
        bFirst = Date.now();
        aAtBFirst = arrivals(target.sink, domainOf.a, from).length;
      }
      if (bArrived >= options.small && aAtBLast === 0) aAtBLast = arrivals(target.sink, domainOf.a, from).length;
      if (bSentAt === undefined && (await statusOf(campaignB)) === "SENT") bSentAt = Date.now();
      if (aSentAt === undefined && (await statusOf(campaignA)) === "SENT") aSentAt = Date.now();
      await sleep(200);
    }
    const loadAfter = os.loadavg();
    const aDuringB = aAtBLast - aAtBFirst;
    const share = options.small / Math.max(1, options.small + aDuringB);
    const all = waits("both");
    const rows = [
      `| /v1/send beside A's ${options.large.toLocaleString("en")}-recipient campaign | API call → sink, ${all.length} of ${probes.length} arrived | p50 ${quantile(all, 0.5).toFixed(2)} s, p99 ${quantile(all, 0.99).toFixed(2)} s | B's: p50 ${quantile(waits("b"), 0.5).toFixed(2)} s, p99 ${quantile(waits("b"), 0.99).toFixed(2)} s; A's own: p50 ${quantile(waits("a"), 0.5).toFixed(2)} s, p99 ${quantile(waits("a"), 0.99).toFixed(2)} s; goal p99 < 1 s |`,
      `| B's ${options.small.toLocaleString("en")}-recipient campaign beside A's | B's share of the delivered rate while both ran | ${(share * 100).toFixed(0)} % | ${options.small.toLocaleString("en")} of B's and ${aDuringB.toLocaleString("en")} of A's arrived between B's first and last email (${bFirst === undefined ? "?" : ((bFirst - bStarted) / 1000).toFixed(1)} s to B's first); goal ≥ 40 % |`,
      `| which campaign is SENT first | | ${bSentAt !== undefined && (aSentAt === undefined || bSentAt < aSentAt) ? "B" : "A"} | B SENT ${bSentAt === undefined ? "not within the hour" : `${((bSentAt - bStarted) / 1000).toFixed(1)} s after its send`}; A SENT ${aSentAt === undefined ? "not within the hour" : `${((aSentAt - bStarted) / 1000).toFixed(1)} s after B's send`}; ${aBeforeB.toLocaleString("en")} of A's had arrived when B started |`,
    ];
    const detail = `Load average (1, 5, 15 min) before: ${loadBefore.map((load) => load.toFixed(2)).join(", ")}; after: ${loadAfter.map((load) => load.toFixed(2)).join(", ")}.`;
    return { rows, detail };
  } finally {
    await client.end();
  }
}
