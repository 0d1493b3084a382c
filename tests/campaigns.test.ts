import { eventually, testDnsClient, testSmtpSinkClient } from "@herald/testing";
import { simpleParser } from "mailparser";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { verifiedDomain } from "./support/domains.js";
import { type CreatedProject, createProject, restClient, signUp, uniqueEmail } from "./support/http.js";
import type { ErrorBody } from "./support/resources.js";

const { stack, dns: dnsServer, smtp } = inject("herald");
const call = restClient(stack.gatewayUrl);
const dns = testDnsClient(dnsServer.controlUrl);
const sink = testSmtpSinkClient(smtp.controlUrl);

export type CampaignJson = {
  id: string;
  projectId: string;
  name: string;
  description: string | null;
  subject: string;
  body: string;
  from: string;
  fromName: string | null;
  replyTo: string | null;
  type: string;
  status: "DRAFT" | "SCHEDULED" | "SENDING" | "SENT" | "CANCELLED";
  audienceType: "ALL" | "SEGMENT" | "FILTERED";
  audienceCondition: Record<string, unknown> | null;
  segmentId: string | null;
  scheduledFor: string | null;
  totalRecipients: number;
  sentCount: number;
  deliveredCount: number;
  openedCount: number;
  clickedCount: number;
  bouncedCount: number;
  stopReason: string | null;
  sentAt: string | null;
  createdAt: string;
  updatedAt: string;
};
type Page = { data: CampaignJson[]; page: number; pageSize: number; total: number; totalPages: number };

const where = (field: string, operator: string, value?: unknown) => ({
  logic: "AND",
  groups: [{ filters: [value === undefined ? { field, operator } : { field, operator, value }] }],
});

/** The messages the sink received for an address, parsed, with a header reader. */
async function received(address: string) {
  const [message] = await sink.waitForMessages(1, { to: address, timeoutMs: 30_000 });
  if (!message) throw new Error(`nothing arrived for ${address}`);
  const parsed = await simpleParser(message.raw);
  // Long header values are folded over several lines.
  const head = (message.raw.split(/\r?\n\r?\n/)[0] ?? "").replace(/\r?\n[ \t]+/g, " ");
  const header = (name: string) => new RegExp(`^${name}:[ \t]*(.*)$`, "im").exec(head)?.[1]?.trim();
  return { html: typeof parsed.html === "string" ? parsed.html : "", subject: parsed.subject ?? "", header };
}

describe("campaigns through the REST API", () => {
  let project: CreatedProject;
  let other: CreatedProject;
  let key: string;
  let domain: string;

  beforeAll(async () => {
    project = await createProject(call, (await signUp(call, "campaigns")).cookie, "Campaigns");
    other = await createProject(call, (await signUp(call, "campaigns-other")).cookie, "Other");
    key = project.secretKey;
    domain = (await verifiedDomain(call, dns, key, "campaigns")).domain;
  });

  const draft = (overrides: Record<string, unknown> = {}) => ({
    name: "November news",
    subject: "News for {{ firstName ?? 'you' }}",
    body: "<p>Hello {{ firstName ?? 'friend' }}</p>",
    from: `news@${domain}`,
    audienceType: "ALL",
    ...overrides,
  });
  const create = (body: Record<string, unknown>, k = key) =>
    call<{ success: boolean; data: CampaignJson; error: ErrorBody["error"] }>("POST", "/campaigns", { key: k, body });
  const get = (id: string, k = key) => call<CampaignJson & { error: ErrorBody["error"] }>("GET", `/campaigns/${id}`, { key: k });

  it("creates a DRAFT in the success envelope, reads, replaces, duplicates and deletes it", async () => {
    const created = await create(draft({ description: "Monthly", fromName: "News", replyTo: `reply@${domain}` }));
    expect(created.status).toBe(201);
    expect(created.body.success).toBe(true);
    const campaign = created.body.data;
    expect(campaign).toMatchObject({
      name: "November news",
      description: "Monthly",
      from: `news@${domain}`,
      fromName: "News",
      replyTo: `reply@${domain}`,
      type: "MARKETING",
      status: "DRAFT",
      audienceType: "ALL",
      audienceCondition: null,
      segmentId: null,
      scheduledFor: null,
      totalRecipients: 0,
      sentCount: 0,
      projectId: project.id,
    });
    expect((await get(campaign.id)).body).toEqual(campaign);

    const replaced = await call<CampaignJson>("PUT", `/campaigns/${campaign.id}`, {
      key,
      body: draft({ name: "Renamed", type: "HEADLESS" }),
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ name: "Renamed", type: "HEADLESS", description: null, fromName: null });

    const copy = await call<CampaignJson>("POST", `/campaigns/${campaign.id}/duplicate`, { key });
    expect(copy.status).toBe(201);
    expect(copy.body).toMatchObject({ name: "Renamed (copy)", status: "DRAFT", subject: campaign.subject });
    expect(copy.body.id).not.toBe(campaign.id);

    expect((await call("DELETE", `/campaigns/${campaign.id}`, { key })).status).toBe(204);
    expect((await get(campaign.id)).status).toBe(404);
    expect((await call("DELETE", `/campaigns/${copy.body.id}`, { key })).status).toBe(204);
  });

  it("lists an offset page filtered by status and search, sorted as asked, and refuses an unknown status", async () => {
    const tag = `list-${Date.now()}`;
    const names = [`${tag} b`, `${tag} a`, `${tag} c`];
    for (const name of names) await create(draft({ name }));
    const page = await call<Page>("GET", `/campaigns?search=${tag}&sort=name&dir=asc&pageSize=2`, { key });
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ page: 1, pageSize: 2, total: 3, totalPages: 2 });
    expect(page.body.data.map((c) => c.name)).toEqual([`${tag} a`, `${tag} b`]);
    const second = await call<Page>("GET", `/campaigns?search=${tag}&sort=name&dir=asc&pageSize=2&page=2`, { key });
    expect(second.body.data.map((c) => c.name)).toEqual([`${tag} c`]);
    // Unknown sort and direction fall back to createdAt, newest first.
    const fallback = await call<Page>("GET", `/campaigns?search=${tag}&sort=bogus&dir=sideways`, { key });
    expect(fallback.body.data.map((c) => c.name)).toEqual([...names].reverse());
    // The sender address is searched too.
    expect((await call<Page>("GET", `/campaigns?search=news@${domain}&status=DRAFT`, { key })).body.total).toBeGreaterThanOrEqual(3);
    expect((await call<Page>("GET", `/campaigns?search=${tag}&status=SENT`, { key })).body.total).toBe(0);

    const bad = await call<ErrorBody>("GET", "/campaigns?status=ARCHIVED", { key });
    expect(bad.status).toBe(400);
    expect(bad.body.success).toBe(false);
    expect(bad.body.error.errors?.[0]?.field).toBe("status");
    expect((await call<ErrorBody>("GET", "/campaigns?page=0", { key })).status).toBe(400);
  });

  it("refuses bad input with the envelope: missing fields, audience rules, a bad condition, Liquid, an unverified sender", async () => {
    const missing = await create({ audienceType: "ALL" });
    expect(missing.status).toBe(422);
    expect(missing.body.error.code).toBe("VALIDATION_ERROR");
    expect(missing.body.error.errors?.map((e) => e.field)).toEqual(expect.arrayContaining(["name", "subject", "body", "from"]));

    const noAudience = await create(draft({ audienceType: undefined }));
    expect(noAudience.status).toBe(422);
    expect(noAudience.body.error.errors?.[0]?.field).toBe("audienceType");

    const noSegment = await create(draft({ audienceType: "SEGMENT" }));
    expect(noSegment.status).toBe(422);
    expect(noSegment.body.error.errors?.[0]?.field).toBe("segmentId");

    const unknownSegment = await create(draft({ audienceType: "SEGMENT", segmentId: "00000000-0000-4000-8000-000000000000" }));
    expect(unknownSegment.status).toBe(422);
    expect(unknownSegment.body.error.errors?.[0]?.field).toBe("segmentId");

    const noCondition = await create(draft({ audienceType: "FILTERED" }));
    expect(noCondition.status).toBe(422);
    expect(noCondition.body.error.errors?.[0]?.field).toBe("audienceCondition");

    // The same answer as a segment's bad condition, the path under the campaign's field.
    const badCondition = await create(draft({ audienceType: "FILTERED", audienceCondition: where("data.plan", "noSuchOperator", "x") }));
    const segmentAnswer = await call<ErrorBody>("POST", "/segments", {
      key,
      body: { name: "bad", condition: where("data.plan", "noSuchOperator", "x") },
    });
    expect(badCondition.status).toBe(segmentAnswer.status);
    expect(badCondition.body.error.code).toBe(segmentAnswer.body.error.code);
    expect(badCondition.body.error.errors?.[0]?.field).toBe(
      segmentAnswer.body.error.errors?.[0]?.field.replace(/^condition/, "audienceCondition"),
    );
    expect(badCondition.body.error.errors?.[0]?.field).toMatch(/^audienceCondition\.groups\[0\]\.filters\[0\]/);

    const notAnObject = await create(draft({ audienceType: "FILTERED", audienceCondition: "plan = gold" }));
    expect(notAnObject.status).toBe(422);

    const liquid = await create(draft({ body: "<p>line one</p>\n<p>{% if %}</p>" }));
    expect(liquid.status).toBe(422);
    expect(liquid.body.error.errors?.[0]).toMatchObject({ field: "body", code: "invalid_liquid" });
    expect(liquid.body.error.errors?.[0]?.message).toMatch(/^line 2:/);

    const tooLarge = await create(draft({ body: "x".repeat(500_001) }));
    expect(tooLarge.status).toBe(422);
    expect(tooLarge.body.error.errors?.[0]).toMatchObject({ field: "body", code: "too_big" });

    const unverified = await create(draft({ from: "news@not-verified.example.com" }));
    expect(unverified.status).toBe(403);
    expect(unverified.body.error.code).toBe("DOMAIN_NOT_VERIFIED");
  });

  it("keeps another project's campaigns out of reach (404) and unknown ids 404", async () => {
    const mine = (await create(draft({ name: "Private" }))).body.data;
    const otherKey = other.secretKey;
    expect((await get(mine.id, otherKey)).status).toBe(404);
    expect((await get(mine.id, otherKey)).body.error.code).toBe("CAMPAIGN_NOT_FOUND");
    expect((await call("PUT", `/campaigns/${mine.id}`, { key: otherKey, body: draft() })).status).toBe(404);
    expect((await call("DELETE", `/campaigns/${mine.id}`, { key: otherKey })).status).toBe(404);
    expect((await call("POST", `/campaigns/${mine.id}/duplicate`, { key: otherKey })).status).toBe(404);
    expect((await call("POST", `/campaigns/${mine.id}/send`, { key: otherKey, body: {} })).status).toBe(404);
    expect((await call("POST", `/campaigns/${mine.id}/cancel`, { key: otherKey })).status).toBe(404);
    expect((await call("POST", `/campaigns/${mine.id}/test`, { key: otherKey, body: { email: uniqueEmail() } })).status).toBe(404);
    expect((await call("GET", `/campaigns/${mine.id}/stats`, { key: otherKey })).status).toBe(404);
    expect((await call<Page>("GET", "/campaigns?search=Private", { key: otherKey })).body.total).toBe(0);
    expect((await get("not-a-uuid")).status).toBe(404);
    expect((await get("00000000-0000-4000-8000-000000000000")).status).toBe(404);
    // The other project's segment is not this project's either.
    const theirs = await call<{ id: string }>("POST", "/segments", {
      key: otherKey,
      body: { name: "theirs", condition: where("data.plan", "equals", "x") },
    });
    expect((await create(draft({ audienceType: "SEGMENT", segmentId: theirs.body.id }))).status).toBe(422);
  });
});

describe("sending a campaign", () => {
  let key: string;
  let domain: string;

  beforeAll(async () => {
    const project = await createProject(call, (await signUp(call, "campaign-send")).cookie, "Campaign send");
    key = project.secretKey;
    domain = (await verifiedDomain(call, dns, key, "campaign-send")).domain;
  });

  const addContact = async (email: string, data: Record<string, unknown> = {}, subscribed = true) =>
    (await call<{ id: string }>("POST", "/contacts", { key, body: { email, data, subscribed } })).body;

  it("sends at once to the subscribed contacts of a FILTERED audience, rendered per contact, with List-Unsubscribe, and ends SENT", async () => {
    const plan = `gold-${Date.now()}`;
    const [ann, bob, unsubscribed, outside] = [uniqueEmail("ann"), uniqueEmail("bob"), uniqueEmail("unsub"), uniqueEmail("outside")];
    await addContact(ann, { plan, firstName: "Ann" });
    await addContact(bob, { plan });
    await addContact(unsubscribed, { plan, firstName: "Nope" }, false);
    await addContact(outside, { plan: "silver" });
    const created = await call<{ data: CampaignJson }>("POST", "/campaigns", {
      key,
      body: {
        name: "Gold news",
        subject: "Hi {{ firstName ?? 'there' }}",
        body: '<p>Hello {{ firstName ?? "friend" }}</p><a href="https://example.com/offer">offer</a> <a href="{{ unsubscribeUrl }}">unsubscribe</a>',
        from: `news@${domain}`,
        audienceType: "FILTERED",
        audienceCondition: where("data.plan", "equals", plan),
      },
    });
    expect(created.status).toBe(201);
    const id = created.body.data.id;

    const sent = await call<{ success: true; data: { id: string; status: string; scheduledFor: null }; message: string }>(
      "POST",
      `/campaigns/${id}/send`,
      { key, body: {} },
    );
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ success: true, data: { id, name: "Gold news", status: "SENDING", scheduledFor: null } });
    expect(typeof sent.body.message).toBe("string");

    const toAnn = await received(ann);
    expect(toAnn.subject).toBe("Hi Ann");
    expect(toAnn.html).toContain("Hello Ann");
    expect(toAnn.header("List-Unsubscribe-Post")).toBe("List-Unsubscribe=One-Click");
    expect(toAnn.header("List-Unsubscribe")).toMatch(new RegExp(`^<${stack.gatewayUrl}/unsubscribe/`));
    // Tracked: the link goes through the gateway's click redirect; the unsubscribe link is the recipient's own.
    expect(toAnn.html).toContain(`${stack.gatewayUrl}/t/c/`);
    expect(toAnn.html).not.toContain("%%herald");
    const toBob = await received(bob);
    expect(toBob.subject).toBe("Hi there");
    expect(toBob.html).toContain("Hello friend");

    const done = await eventually(async () => {
      const campaign = (await call<CampaignJson>("GET", `/campaigns/${id}`, { key })).body;
      return campaign.status === "SENT" && campaign.sentCount === 2 ? campaign : undefined;
    });
    expect(done.totalRecipients).toBe(2);
    expect(done.sentAt).not.toBeNull();
    expect(await sink.messages(unsubscribed)).toEqual([]);
    expect(await sink.messages(outside)).toEqual([]);

    // Sending again is a status conflict.
    const again = await call<ErrorBody>("POST", `/campaigns/${id}/send`, { key, body: {} });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("CAMPAIGN_STATE_CONFLICT");
    expect(
      (
        await call<ErrorBody>("PUT", `/campaigns/${id}`, {
          key,
          body: { ...created.body.data, audienceCondition: where("data.plan", "equals", plan) },
        })
      ).status,
    ).toBe(409);
    expect((await call<ErrorBody>("POST", `/campaigns/${id}/cancel`, { key })).status).toBe(409);

    const stats = await eventually(async () => {
      const answer = (await call<Record<string, number>>("GET", `/campaigns/${id}/stats`, { key })).body;
      return answer.sent === 2 ? answer : undefined;
    });
    expect(stats).toMatchObject({ campaignId: id, totalRecipients: 2, sent: 2, bounced: 0 });
    // A SENT campaign can be deleted.
    expect((await call("DELETE", `/campaigns/${id}`, { key })).status).toBe(204);
  });

  it("sends to a segment's subscribed members", async () => {
    const tier = `seg-${Date.now()}`;
    const [member, alsoMember] = [uniqueEmail("member"), uniqueEmail("member2")];
    await addContact(member, { tier });
    await addContact(alsoMember, { tier });
    const segment = await call<{ id: string }>("POST", "/segments", {
      key,
      body: { name: tier, condition: where("data.tier", "equals", tier) },
    });
    const created = await call<{ data: CampaignJson }>("POST", "/campaigns", {
      key,
      body: {
        name: "Segment",
        subject: "S",
        body: "<p>S</p>",
        from: `news@${domain}`,
        audienceType: "SEGMENT",
        segmentId: segment.body.id,
      },
    });
    expect(created.body.data.segmentId).toBe(segment.body.id);
    await call("POST", `/campaigns/${created.body.data.id}/send`, { key, body: { scheduledFor: null } });
    await received(member);
    await received(alsoMember);
    const done = await eventually(async () => {
      const campaign = (await call<CampaignJson>("GET", `/campaigns/${created.body.data.id}`, { key })).body;
      return campaign.status === "SENT" ? campaign : undefined;
    });
    expect(done.totalRecipients).toBe(2);
  });
});
