import { randomUUID } from "node:crypto";
import { createClient } from "@connectrpc/connect";
import { createRpcTransport } from "@herald/platform";
import { EmailsService } from "@herald/proto/herald/delivery/v1/emails_service_pb";
import { testDnsClient, testSmtpSinkClient } from "@herald/testing";
import { simpleParser } from "mailparser";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createDb } from "../services/delivery/src/db/client.js";
import {
  type EmailActivityFacts,
  type EmailActivityType,
  writeEmailActivity,
} from "../services/delivery/src/events/email-activity-outbox.js";
import { verifiedDomain } from "./support/domains.js";
import { type CreatedProject, createProject, restClient, signUp, uniqueEmail } from "./support/http.js";
import type { ErrorBody } from "./support/resources.js";

const { stack, dns: dnsServer, smtp } = inject("herald");
const call = restClient(stack.gatewayUrl);
const dns = testDnsClient(dnsServer.controlUrl);
const sink = testSmtpSinkClient(smtp.controlUrl);
// Campaigns, workflows and POST /v1/send enqueue through this RPC; tests call it directly.
const emails = createClient(EmailsService, createRpcTransport({ baseUrl: stack.serviceUrls.delivery, timeoutMs: 30_000 }));
const deliveryDb = createDb(stack.databaseUrl, "delivery");

type ActivityItem = {
  id: string;
  type: string;
  emailId: string;
  contactId: string | null;
  recipient: string;
  url: string | null;
  reason: string | null;
  campaignId: string | null;
  workflowId: string | null;
  category: string;
  createdAt: string;
};
type ActivityPage = { data: ActivityItem[]; cursor: string; hasMore: boolean; total: number };
type Counts = { total: number; last24Hours: number; last7Days: number; last30Days: number };
type Stats = Counts & {
  byType: Record<string, Counts>;
  emails: { sent: number; opened: number; clicked: number; bounced: number; complained: number };
  rates: { openRate: number; clickRate: number; bounceRate: number; complaintRate: number };
};
type Bucket = { date: string; sent: number; delivered: number; opened: number; clicked: number; bounced: number; complained: number };
type Timeseries = { interval: "day" | "hour"; from: string; to: string; buckets: Bucket[] };

const hour = 3_600_000;

afterAll(async () => {
  await deliveryDb.$disconnect();
});

/**
 * Records activity at a chosen time in the past, which no endpoint can do: the tracking endpoints
 * record opens and clicks as they happen. Only the timeseries needs it, for buckets of past days;
 * it writes through the same writeEmailActivity the dispatcher and the tracking service use.
 */
function recordBackDated(type: EmailActivityType, email: EmailActivityFacts, details: { url?: string; occurredAt: Date }) {
  return deliveryDb.$transaction((tx) => writeEmailActivity(tx, type, email, details));
}

/** The open pixel and the click links (in the order of the HTML) of the email that the sink caught for an address. */
async function trackingLinksTo(address: string): Promise<{ pixel: string; clicks: string[] }> {
  const [message] = await sink.waitForMessages(1, { to: address, timeoutMs: 20_000 });
  const parsed = await simpleParser(message?.raw ?? "");
  const links = [...String(parsed.html).matchAll(/(?:href|src)="([^"]+)"/g)].map((match) => match[1] ?? "");
  const pixel = links.find((url) => url.startsWith(`${stack.gatewayUrl}/t/o/`));
  if (!pixel) throw new Error(`no open pixel in the email to ${address}`);
  return { pixel, clicks: links.filter((url) => url.startsWith(`${stack.gatewayUrl}/t/c/`)) };
}

/** Opens or clicks through the gateway as the recipient's mail client would. */
async function follow(url: string, status: number): Promise<void> {
  const answer = await fetch(url, { redirect: "manual" });
  expect(answer.status, url).toBe(status);
}

const factsOf = (projectId: string, id: string, toEmail: string): EmailActivityFacts => ({
  id,
  projectId,
  contactId: null,
  toEmail,
  category: "TRANSACTIONAL",
  campaignId: null,
  workflowId: null,
  messageId: `<${id}@test>`,
  attempts: 1,
});

async function eventually<T>(read: () => Promise<T>, accept: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("the activity feed and send analytics through the REST API", () => {
  let project: CreatedProject;
  let other: CreatedProject;
  let key: string;
  let domain: string;
  const sent: Array<{ id: string; to: string; pixel: string; clicks: string[] }> = [];
  let bounced: { id: string; to: string };

  const get = <T>(path: string, k = key) => call<T & ErrorBody>("GET", path, { key: k });
  const list = (query = "", k = key) => get<ActivityPage>(`/activity${query}`, k);

  beforeAll(async () => {
    project = await createProject(call, (await signUp(call, "activity")).cookie, "Activity");
    other = await createProject(call, (await signUp(call, "activity-other")).cookie, "Other");
    key = project.secretKey;
    domain = (await verifiedDomain(call, dns, key, "activity")).domain;

    // Two emails the sink accepts, one it refuses for good (a bounce): real sends through the queue,
    // each with six links to click and, from the project's default tracking, an open pixel.
    const refused = uniqueEmail("gone");
    await sink.rejectRecipient(refused, { code: 550 });
    const items = [0, 1, 2, 3, 4, 5].map((index) => `<a href="https://shop.example/item/${index}">Item ${index}</a>`);
    for (const to of [uniqueEmail("one"), uniqueEmail("two"), refused]) {
      const { emailId } = await emails.enqueueEmail({
        projectId: project.id,
        idempotencyKey: randomUUID(),
        to: { email: to },
        from: { email: `news@${domain}` },
        subject: "Spring sale",
        html: `<p>Spring sale</p><p>${items.join(" ")}</p>`,
      });
      if (to === refused) bounced = { id: emailId, to };
      else sent.push({ id: emailId, to, ...(await trackingLinksTo(to)) });
    }
    const page = await eventually(
      () => list(),
      (answer) => answer.body.total === 3,
    );
    expect(page.body.total).toBe(3);
  });

  it("lists what sending recorded, as cursor-list items of the documented shape", async () => {
    const answer = await list();
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ total: 3, hasMore: false, cursor: "" });
    const first = sent[0];
    const item = answer.body.data.find((candidate) => candidate.emailId === first?.id);
    expect(item).toEqual({
      id: expect.any(String),
      type: "email.sent",
      emailId: first?.id,
      contactId: null,
      recipient: first?.to,
      url: null,
      reason: null,
      campaignId: null,
      workflowId: null,
      category: "TRANSACTIONAL",
      createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      // Only email.received has them (tests/inbound.test.ts).
      subject: null,
      sender: null,
      inReplyTo: null,
    });
    const bounce = answer.body.data.find((candidate) => candidate.emailId === bounced.id);
    expect(bounce).toMatchObject({ type: "email.bounce", recipient: bounced.to, reason: expect.stringContaining("550") });
    const times = answer.body.data.map((candidate) => Date.parse(candidate.createdAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));
  });

  it("pages with a stable cursor: total on the first page only, nothing skipped or repeated while activity arrives", async () => {
    const [first] = sent as [(typeof sent)[0]];
    expect(first.clicks).toHaveLength(6);
    // The first email opened (its pixel loaded), then each of its links clicked twice, the last click after the first page.
    await follow(first.pixel, 200);
    await eventually(
      () => list("?type=email.open"),
      (answer) => answer.body.total === 1,
    );
    const clicks = [...first.clicks, ...first.clicks];
    for (const click of clicks.slice(0, 11)) await follow(click, 302);
    const pageOne = await list("?limit=6");
    expect(pageOne.body).toMatchObject({ total: 15, hasMore: true });
    expect(pageOne.body.data).toHaveLength(6);
    // Activity newer than the first page does not move the later pages.
    await follow(clicks[11] ?? "", 302);
    const pageTwo = await list(`?limit=6&cursor=${encodeURIComponent(pageOne.body.cursor)}`);
    expect(pageTwo.body).toMatchObject({ total: 0, hasMore: true });
    const pageThree = await list(`?limit=6&cursor=${encodeURIComponent(pageTwo.body.cursor)}`);
    expect(pageThree.body).toMatchObject({ total: 0, hasMore: false, cursor: "" });
    const ids = [...pageOne.body.data, ...pageTwo.body.data, ...pageThree.body.data].map((item) => item.id);
    expect(ids).toHaveLength(15);
    expect(new Set(ids).size).toBe(15);
    // The first page again sees the newer open; a limit above 100 is 100.
    expect((await list("?limit=500")).body).toMatchObject({ total: 16, hasMore: false });
  });

  it("filters by type, several at once, and by email", async () => {
    const clicks = await list("?type=email.click&limit=100");
    expect(clicks.body.total).toBe(12);
    expect(clicks.body.data.every((item) => item.type === "email.click" && item.url?.startsWith("https://shop.example/"))).toBe(true);
    expect((await list("?type=email.open,email.bounce")).body.total).toBe(2);
    const ofEmail = await list(`?emailId=${bounced.id}`);
    expect(ofEmail.body.data.map((item) => item.type)).toEqual(["email.bounce"]);
  });

  it("answers 400 for an unknown type, a foreign cursor and bad analytics parameters", async () => {
    const type = await list("?type=email.sent,email.opened");
    expect(type.status).toBe(400);
    expect(type.body.error).toMatchObject({ code: "INVALID_ACTIVITY_TYPE", statusCode: 400 });
    expect(type.body.error.errors).toEqual([expect.objectContaining({ field: "type", received: '"email.opened"' })]);
    const cursor = await list("?cursor=bm90LW91cnM");
    expect(cursor.status).toBe(400);
    expect(cursor.body.error.code).toBe("INVALID_CURSOR");
    // A well-formed cursor whose time PostgreSQL cannot be given.
    for (const occurredAt of ["0000-06-01T00:00:00Z", "-005000-01-01T00:00:00Z"]) {
      const foreign = Buffer.from(JSON.stringify({ occurredAt, id: randomUUID() })).toString("base64url");
      const answer = await list(`?cursor=${foreign}`);
      expect([occurredAt, answer.status, answer.body.error.code]).toEqual([occurredAt, 400, "INVALID_CURSOR"]);
    }
    for (const query of ["?from=0000-01-01&to=0000-01-05", "?from=0001-01-01T00:00:00%2B01:00&to=0001-01-05"]) {
      const answer = await get(`/analytics/timeseries${query}`);
      expect([query, answer.status, answer.body.error.code]).toEqual([query, 400, "INVALID_RANGE"]);
    }

    for (const query of ["?minutes=0", "?hours=abc", "?minutes=10&hours=1", `?hours=${366 * 24 + 1}`, "?type=nope"]) {
      const answer = await get(`/activity/recent-count${query}`);
      expect(answer.status, query).toBe(400);
      expect(answer.body.success).toBe(false);
    }
    for (const query of ["?from=yesterday", "?from=2025-02-30", "?to=2025-03-01T25:00:00Z", "?interval=week"]) {
      const answer = await get(`/analytics/timeseries${query}`);
      expect(answer.status, query).toBe(400);
      expect(answer.body.error.code).toBe("BAD_REQUEST");
      expect(answer.body.error.errors?.[0]?.field).toBe(query.slice(1).split("=")[0]);
    }
  });

  it("answers counts by type and period, and open, click and bounce rates over the sent emails", async () => {
    const answer = await get<Stats>("/activity/stats");
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ total: 16, last24Hours: 16, last7Days: 16, last30Days: 16 });
    expect(Object.keys(answer.body.byType).sort()).toEqual(
      [
        "email.bounce",
        "email.click",
        "email.complaint",
        "email.deferred",
        "email.delivery",
        "email.failed",
        "email.open",
        "email.received",
        "email.sent",
        "email.unsubscribe",
      ].sort(),
    );
    expect(answer.body.byType["email.sent"]).toEqual({ total: 2, last24Hours: 2, last7Days: 2, last30Days: 2 });
    expect(answer.body.byType["email.click"]?.total).toBe(12);
    expect(answer.body.byType["email.complaint"]?.total).toBe(0);
    // Three emails handed to the provider (two accepted, one refused); one opened and clicked.
    expect(answer.body.emails).toEqual({ sent: 3, opened: 1, clicked: 1, bounced: 1, complained: 0 });
    expect(answer.body.rates).toEqual({ openRate: 0.3333, clickRate: 0.3333, bounceRate: 0.3333, complaintRate: 0 });
  });

  it("counts recent activity: 24 hours by default, or the last minutes or hours, of some types", async () => {
    const recent = await get<{ count: number; since: string }>("/activity/recent-count");
    expect(recent.status).toBe(200);
    expect(recent.body.count).toBe(16);
    expect(Math.abs(Date.parse(recent.body.since) - (Date.now() - 24 * hour))).toBeLessThan(60_000);
    const lastHour = await get<{ count: number; since: string }>("/activity/recent-count?minutes=60");
    expect(lastHour.body.count).toBe(16);
    expect(Math.abs(Date.parse(lastHour.body.since) - (Date.now() - hour))).toBeLessThan(60_000);
    expect((await get<{ count: number }>("/activity/recent-count?hours=3&type=email.click")).body.count).toBe(12);
  });

  it("lists the types present, most frequent first", async () => {
    const answer = await get<{ types: Array<{ type: string; count: number; lastSeenAt: string }> }>("/activity/types");
    expect(answer.status).toBe(200);
    expect(answer.body.types.map(({ type, count }) => ({ type, count }))).toEqual([
      { type: "email.click", count: 12 },
      { type: "email.sent", count: 2 },
      { type: "email.bounce", count: 1 },
      { type: "email.open", count: 1 },
    ]);
    expect(Number.isNaN(Date.parse(answer.body.types[0]?.lastSeenAt ?? ""))).toBe(false);
  });

  it("answers zero-filled daily or hourly buckets, and refuses ranges too long for the interval", async () => {
    const [first] = sent as [(typeof sent)[0]];
    const facts = factsOf(project.id, first.id, first.to);
    await recordBackDated("email.open", facts, { occurredAt: new Date("2025-03-01T08:00:00Z") });
    await recordBackDated("email.click", facts, { url: "https://a.example", occurredAt: new Date("2025-03-03T23:30:00Z") });
    // Older than the longest window of the recent count.
    expect((await get<{ count: number }>(`/activity/recent-count?hours=${366 * 24}`)).body.count).toBe(16);

    const days = await get<Timeseries>("/analytics/timeseries?from=2025-03-01&to=2025-03-03");
    expect(days.status).toBe(200);
    expect(days.body).toMatchObject({ interval: "day", from: "2025-03-01T00:00:00.000Z", to: "2025-03-04T00:00:00.000Z" });
    const zero = { sent: 0, delivered: 0, opened: 0, clicked: 0, bounced: 0, complained: 0 };
    expect(days.body.buckets).toEqual([
      { ...zero, date: "2025-03-01T00:00:00.000Z", opened: 1 },
      { ...zero, date: "2025-03-02T00:00:00.000Z" },
      { ...zero, date: "2025-03-03T00:00:00.000Z", clicked: 1 },
    ]);

    const hours = await get<Timeseries>("/analytics/timeseries?from=2025-03-03T20:00:00Z&to=2025-03-03T23:59:00Z&interval=hour");
    expect(hours.body.interval).toBe("hour");
    expect(hours.body.buckets.map((bucket) => bucket.clicked)).toEqual([0, 0, 0, 1]);

    // Today's sends are in the default range: the last 30 days.
    const recent = await get<Timeseries>("/analytics/timeseries");
    expect(recent.body.buckets).toHaveLength(30);
    expect(recent.body.buckets.reduce((total, bucket) => total + bucket.sent, 0)).toBe(2);
    expect(recent.body.buckets.reduce((total, bucket) => total + bucket.bounced, 0)).toBe(1);

    expect((await get<Timeseries>("/analytics/timeseries?from=2024-01-01&to=2024-12-31")).body.buckets).toHaveLength(366);
    for (const query of ["from=2024-01-01&to=2025-01-01", "from=2025-01-01&to=2025-02-01&interval=hour"]) {
      const answer = await get(`/analytics/timeseries?${query}`);
      expect(answer.status, query).toBe(400);
      expect(answer.body.error.code).toBe("RANGE_TOO_LARGE");
    }
    const reversed = await get("/analytics/timeseries?from=2025-03-02&to=2025-03-01");
    expect(reversed.status).toBe(400);
  });

  it("shows another project none of this project's activity", async () => {
    const theirs = other.secretKey;
    expect((await list("", theirs)).body).toEqual({ data: [], cursor: "", hasMore: false, total: 0 });
    expect((await list(`?emailId=${bounced.id}`, theirs)).body.data).toEqual([]);
    const stats = await get<Stats>("/activity/stats", theirs);
    expect(stats.body).toMatchObject({ total: 0, emails: { sent: 0 }, rates: { openRate: 0 } });
    expect((await get<{ count: number }>("/activity/recent-count", theirs)).body.count).toBe(0);
    expect((await get<{ types: unknown[] }>("/activity/types", theirs)).body.types).toEqual([]);
    const series = await get<Timeseries>("/analytics/timeseries?from=2025-03-01&to=2025-03-03", theirs);
    expect(series.body.buckets.every((bucket) => bucket.opened === 0 && bucket.clicked === 0)).toBe(true);
  });

  it("requires a secret key: a public key or none is 401", async () => {
    for (const path of ["/activity", "/activity/stats", "/activity/recent-count", "/activity/types", "/analytics/timeseries"]) {
      const withPublic = await get(path, project.publicKey);
      expect(withPublic.status, path).toBe(401);
      expect(withPublic.body.error.code).toBe("INVALID_API_KEY");
      expect((await call("GET", path)).status, path).toBe(401);
    }
  });
});
