import { testDnsClient, testSmtpSinkClient } from "@herald/testing";
import { simpleParser } from "mailparser";
import { beforeAll, describe, expect, inject, it } from "vitest";
import type { CampaignJson } from "./campaigns.test.js";
import { verifiedDomain } from "./support/domains.js";
import { type CreatedProject, createProject, restClient, signUp, uniqueEmail } from "./support/http.js";
import type { ErrorBody } from "./support/resources.js";

const { stack, dns: dnsServer, smtp } = inject("herald");
const call = restClient(stack.gatewayUrl);
const dns = testDnsClient(dnsServer.controlUrl);
const sink = testSmtpSinkClient(smtp.controlUrl);

const where = (field: string, operator: string, value?: unknown) => ({
  logic: "AND",
  groups: [{ filters: [value === undefined ? { field, operator } : { field, operator, value }] }],
});

/** Polls every 300 ms, under the project's rate limit (1,000 requests a minute), until `check` answers. */
async function eventually<T>(check: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`not done within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}

/** Imports `count` subscribed contacts with data { batch } through a CSV job, and waits for it. */
async function importContacts(key: string, batch: string, count: number): Promise<string[]> {
  const emails = Array.from({ length: count }, (_, index) => `${batch}-${index}@example.com`);
  const form = new FormData();
  form.append("file", new Blob([`email,batch\n${emails.map((email) => `${email},${batch}`).join("\n")}\n`], { type: "text/csv" }), "c.csv");
  const started = await fetch(`${stack.gatewayUrl}/contacts/import`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}` },
    body: form,
  });
  const { jobId } = (await started.json()) as { jobId: string };
  await eventually(async () => {
    const job = (await call<{ status: string }>("GET", `/contacts/import/${jobId}`, { key })).body;
    return job.status === "completed";
  }, 120_000);
  return emails;
}

describe("campaign lifecycle", () => {
  let project: CreatedProject;
  let key: string;
  let domain: string;

  beforeAll(async () => {
    project = await createProject(call, (await signUp(call, "campaign-life")).cookie, "Campaign lifecycle");
    key = project.secretKey;
    domain = (await verifiedDomain(call, dns, key, "campaign-life")).domain;
  });

  const createCampaign = async (overrides: Record<string, unknown> = {}) => {
    const answer = await call<{ data: CampaignJson }>("POST", "/campaigns", {
      key,
      body: { name: "Life", subject: "Hello", body: "<p>Hello {{ email }}</p>", from: `news@${domain}`, audienceType: "ALL", ...overrides },
    });
    expect(answer.status).toBe(201);
    return answer.body.data;
  };
  const getCampaign = async (id: string) => (await call<CampaignJson>("GET", `/campaigns/${id}`, { key })).body;
  const send = (id: string, body: Record<string, unknown> = {}) =>
    call<{
      success: boolean;
      data: { id: string; name: string; status: string; scheduledFor: string | null };
      message: string;
      error: ErrorBody["error"];
    }>("POST", `/campaigns/${id}/send`, { key, body });

  it("schedules with a parsable scheduledFor, keeps it editable and upcoming, and refuses bad dates", async () => {
    const campaign = await createCampaign();
    const bad = await send(campaign.id, { scheduledFor: "next tuesday-ish" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.errors?.[0]?.field).toBe("scheduledFor");
    const far = await send(campaign.id, { scheduledFor: new Date(Date.now() + 400 * 86_400_000).toISOString() });
    expect(far.status).toBe(422);
    expect(far.body.error.errors?.[0]?.field).toBe("scheduledFor");

    const due = new Date(Date.now() + 3_600_000);
    const scheduled = await send(campaign.id, { scheduledFor: due.toUTCString() });
    expect(scheduled.status).toBe(200);
    expect(scheduled.body).toMatchObject({ success: true, data: { id: campaign.id, name: "Life", status: "SCHEDULED" } });
    expect(Date.parse(scheduled.body.data.scheduledFor ?? "")).toBe(Math.floor(due.getTime() / 1000) * 1000);
    expect(scheduled.body.message).toContain("scheduled");
    // Listed as upcoming while it waits; still editable, and a second send or a delete is a conflict.
    const upcoming = await call<{ data: Array<{ type: string; id: string; scheduledFor: string }> }>("GET", "/activity/upcoming", { key });
    expect(upcoming.body.data).toContainEqual(expect.objectContaining({ type: "campaign", id: campaign.id }));
    const edited = await call<CampaignJson>("PUT", `/campaigns/${campaign.id}`, { key, body: { ...campaign, name: "Life (edited)" } });
    expect(edited.status).toBe(200);
    // An audience of ALL keeps no condition: stored as NULL, not as a JSON value that usage checks would read as a tree.
    expect(edited.body).toMatchObject({ name: "Life (edited)", status: "SCHEDULED", audienceCondition: null });
    expect((await send(campaign.id)).status).toBe(409);
    expect((await call("DELETE", `/campaigns/${campaign.id}`, { key })).status).toBe(409);
    expect((await call("POST", `/campaigns/${campaign.id}/cancel`, { key })).status).toBe(200);
    const after = await call<{ data: Array<{ id: string }> }>("GET", "/activity/upcoming", { key });
    expect(after.body.data.map((item) => item.id)).not.toContain(campaign.id);
  });

  it("fires a scheduled campaign when it falls due", async () => {
    const batch = `sched-${Date.now()}`;
    const [recipient] = await importContacts(key, batch, 1);
    const campaign = await createCampaign({ audienceType: "FILTERED", audienceCondition: where("data.batch", "equals", batch) });
    expect((await send(campaign.id, { scheduledFor: new Date(Date.now() + 2_000).toISOString() })).body.data.status).toBe("SCHEDULED");
    await sink.waitForMessages(1, { to: recipient, timeoutMs: 60_000 });
    const done = await eventually(async () => {
      const current = await getCampaign(campaign.id);
      return current.status === "SENT" ? current : undefined;
    }, 60_000);
    expect(done.totalRecipients).toBe(1);
  }, 120_000);

  it("sends at once for a scheduledFor in the past", async () => {
    const batch = `past-${Date.now()}`;
    const [recipient] = await importContacts(key, batch, 1);
    const campaign = await createCampaign({ audienceType: "FILTERED", audienceCondition: where("data.batch", "equals", batch) });
    const answer = await send(campaign.id, { scheduledFor: "2020-01-01T00:00:00Z" });
    expect(answer.body.data.status).toBe("SENDING");
    await sink.waitForMessages(1, { to: recipient, timeoutMs: 90_000 });
  }, 180_000);

  it("cancels a SCHEDULED campaign before it fires; it is never sent", async () => {
    const batch = `cancel-sched-${Date.now()}`;
    const [recipient] = await importContacts(key, batch, 1);
    const campaign = await createCampaign({ audienceType: "FILTERED", audienceCondition: where("data.batch", "equals", batch) });
    await send(campaign.id, { scheduledFor: new Date(Date.now() + 2_000).toISOString() });
    const cancelled = await call<CampaignJson>("POST", `/campaigns/${campaign.id}/cancel`, { key });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: "CANCELLED", stopReason: "cancelled" });
    expect((await call<ErrorBody>("POST", `/campaigns/${campaign.id}/cancel`, { key })).status).toBe(409);
    expect((await send(campaign.id)).status).toBe(409);
    // Past its time, still cancelled and nothing sent.
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    expect((await getCampaign(campaign.id)).status).toBe("CANCELLED");
    expect(await sink.messages(recipient)).toEqual([]);
    expect((await call("DELETE", `/campaigns/${campaign.id}`, { key })).status).toBe(204);
  }, 180_000);

  it("cancels while SENDING: nothing is enqueued after the answer, queued emails are withdrawn, sent ones stay", async () => {
    const batch = `cancel-sending-${Date.now()}`;
    const emails = await importContacts(key, batch, 1_500);
    const campaign = await createCampaign({ audienceType: "FILTERED", audienceCondition: where("data.batch", "equals", batch) });
    await send(campaign.id);
    const cancelled = await call<CampaignJson & { error: ErrorBody["error"] }>("POST", `/campaigns/${campaign.id}/cancel`, { key });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe("CANCELLED");
    const total = cancelled.body.totalRecipients;
    expect(total).toBeLessThanOrEqual(emails.length);
    // Whatever the queue still sends was claimed before the cancel; nothing more is enqueued or sent after it.
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    const later = await getCampaign(campaign.id);
    expect(later.status).toBe("CANCELLED");
    expect(later.totalRecipients).toBe(total);
    // Asked 25 at a time: 1,500 requests at once overran the sink's control port under load (ECONNRESET).
    let delivered = 0;
    for (let first = 0; first < emails.length; first += 25) {
      const answers = await Promise.all(emails.slice(first, first + 25).map((email) => sink.messages(email)));
      delivered += answers.filter((messages) => messages.length > 0).length;
    }
    expect(delivered).toBeLessThanOrEqual(total);
    expect(later.sentCount).toBeLessThanOrEqual(total);
  }, 180_000);

  it("sends a test email to any address without moving status or counters", async () => {
    const campaign = await createCampaign({ subject: "Offer for {{ email }}" });
    const to = uniqueEmail("test-send");
    const answer = await call<{ success: true; data: { emailId: string; email: string } }>("POST", `/campaigns/${campaign.id}/test`, {
      key,
      body: { email: to },
    });
    expect(answer.status).toBe(200);
    expect(answer.body.data.email).toBe(to);
    const [message] = await sink.waitForMessages(1, { to, timeoutMs: 90_000 });
    expect(message?.raw).toContain(`[Test] Offer for ${to}`);
    expect(await getCampaign(campaign.id)).toMatchObject({ status: "DRAFT", totalRecipients: 0, sentCount: 0 });
    const bad = await call<ErrorBody>("POST", `/campaigns/${campaign.id}/test`, { key, body: { email: "not-an-address" } });
    expect(bad.status).toBe(422);
    expect(bad.body.error.errors?.[0]?.field).toBe("email");
  }, 180_000);

  it("counts the first open and click of each email once, and reports stats and analytics", async () => {
    const batch = `engage-${Date.now()}`;
    const [recipient] = await importContacts(key, batch, 1);
    const campaign = await createCampaign({
      name: `Engagement ${batch}`,
      body: '<p>Hi</p><a href="https://example.com/deal">deal</a>',
      audienceType: "FILTERED",
      audienceCondition: where("data.batch", "equals", batch),
    });
    await send(campaign.id);
    const [message] = await sink.waitForMessages(1, { to: recipient ?? "", timeoutMs: 90_000 });
    const html = String((await simpleParser(message?.raw ?? "")).html || "");
    const pixel = /(http:\/\/127\.0\.0\.1:\d+\/t\/o\/[^"'\s>]+)/.exec(html)?.[1];
    const click = /(http:\/\/127\.0\.0\.1:\d+\/t\/c\/[^"'\s>]+)/.exec(html)?.[1];
    expect(pixel).toBeDefined();
    expect(click).toBeDefined();
    for (let i = 0; i < 2; i++) {
      await fetch(pixel ?? "");
      await fetch(click ?? "", { redirect: "manual" });
    }
    const counted = await eventually(async () => {
      const current = await getCampaign(campaign.id);
      return current.status === "SENT" && current.openedCount >= 1 && current.clickedCount >= 1 ? current : undefined;
    }, 90_000);
    expect(counted).toMatchObject({ sentCount: 1, openedCount: 1, clickedCount: 1, bouncedCount: 0, totalRecipients: 1 });
    const stats = (await call<Record<string, unknown>>("GET", `/campaigns/${campaign.id}/stats`, { key })).body;
    expect(stats).toMatchObject({
      sent: 1,
      opened: 1,
      clicked: 1,
      openRate: 1,
      clickRate: 1,
      bounceRate: 0,
      complained: 0,
      unsubscribed: 0,
    });

    const top = await call<{ metric: string; data: Array<{ campaignId: string }> }>(
      "GET",
      "/analytics/top-campaigns?metric=clicked&limit=50",
      { key },
    );
    expect(top.status).toBe(200);
    expect(top.body.metric).toBe("clicked");
    expect(top.body.data.map((row) => row.campaignId)).toContain(campaign.id);
    expect((await call<ErrorBody>("GET", "/analytics/top-campaigns?metric=revenue", { key })).status).toBe(400);
    const breakdown = await call<{ data: Array<{ campaignId: string; opened: number }>; totals: { campaigns: number } }>(
      "GET",
      "/analytics/campaign-stats",
      { key },
    );
    expect(breakdown.body.data.find((row) => row.campaignId === campaign.id)?.opened).toBe(1);
    expect(breakdown.body.totals.campaigns).toBeGreaterThanOrEqual(1);
  }, 180_000);

  it("refuses to delete a segment a SCHEDULED campaign uses, and allows it once the campaign is cancelled", async () => {
    const segment = await call<{ id: string }>("POST", "/segments", {
      key,
      body: { name: `in use ${Date.now()}`, condition: where("data.region", "equals", "nowhere") },
    });
    const user = await createCampaign({ audienceType: "SEGMENT", segmentId: segment.body.id });
    // A DRAFT does not hold the segment; a SCHEDULED campaign does.
    await send(user.id, { scheduledFor: new Date(Date.now() + 86_400_000).toISOString() });
    const refused = await call<ErrorBody>("DELETE", `/segments/${segment.body.id}`, { key });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("SEGMENT_IN_USE");
    await call("POST", `/campaigns/${user.id}/cancel`, { key });
    expect((await call("DELETE", `/segments/${segment.body.id}`, { key })).status).toBe(204);
  }, 180_000);

  it("lists campaigns in field and event usage", async () => {
    const contact = await call("POST", "/contacts", {
      key,
      body: { email: uniqueEmail("usage"), data: { region: "eu", loyaltyTier: "gold" } },
    });
    expect(contact.status).toBe(201);
    const campaign = await createCampaign({
      name: "Usage",
      body: "<p>{{ loyaltyTier }}</p>",
      audienceType: "FILTERED",
      audienceCondition: {
        logic: "AND",
        groups: [
          {
            filters: [
              { field: "data.region", operator: "equals", value: "eu" },
              { field: "event.checkout", operator: "triggered" },
            ],
          },
        ],
      },
    });
    type Usages = { segments: unknown[]; campaigns: Array<{ id: string; name: string }>; workflows: unknown[] };
    // The field is known to the project once the contact's data has been registered.
    const region = await eventually(async () => {
      const answer = await call<Usages>("GET", "/contacts/fields/data.region/usage", { key });
      return answer.status === 200 ? answer : undefined;
    });
    expect(region.body.campaigns).toContainEqual({ id: campaign.id, name: "Usage" });
    const tier = await eventually(async () => {
      const answer = await call<Usages>("GET", "/contacts/fields/data.loyaltyTier/usage", { key });
      return answer.status === 200 ? answer : undefined;
    });
    expect(tier.body.campaigns).toContainEqual({ id: campaign.id, name: "Usage" });
    const event = await call<Usages>("GET", "/events/checkout/usage", { key });
    expect(event.body.campaigns).toContainEqual({ id: campaign.id, name: "Usage" });
    expect((await call<Usages>("GET", "/events/unrelated/usage", { key })).body.campaigns).toEqual([]);
  }, 180_000);
});
