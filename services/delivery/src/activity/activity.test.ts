import { randomUUID } from "node:crypto";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Client, Code, createClient } from "@connectrpc/connect";
import { errorDetailOf } from "@herald/errors";
import { createHealthState, createLogger, createRpcServer, createRpcTransport, type RpcServer, serverInterceptors } from "@herald/platform";
import { ActivityService, TimeseriesInterval } from "@herald/proto/herald/delivery/v1/activity_service_pb";
import { EmailKind, EmailStatus } from "@herald/proto/herald/delivery/v1/emails_service_pb";
import { expectFailure } from "@herald/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type EmailActivityFacts, type EmailActivityType, writeEmailActivity } from "../events/email-activity-outbox.js";
import { createActivityRpc } from "../rpc/activity-rpc.js";
import {
  type DeliveryHarness,
  emailActivityOf,
  eventually,
  newProjectId,
  randomRecipient,
  startDelivery,
} from "../test-support/delivery-harness.js";
import { createActivity } from "./activity.js";

let harness: DeliveryHarness;
let server: RpcServer;
let activity: Client<typeof ActivityService>;

beforeAll(async () => {
  harness = await startDelivery(inject("herald"));
  // ActivityService alone, with the interceptors of delivery's server, on the harness's database.
  const logger = createLogger({ name: "activity-test", level: "silent" });
  server = createRpcServer({
    health: createHealthState([ActivityService.typeName]),
    interceptors: serverInterceptors({ logger }),
    logger,
    routes: (router) =>
      router.service(
        ActivityService,
        createActivityRpc({
          activity: createActivity({ db: harness.db, activitySince: async () => new Date(0) }),
          retention: harness.emailRetention,
        }),
      ),
  });
  const port = await server.listen(0, "127.0.0.1");
  activity = createClient(ActivityService, createRpcTransport({ baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 30_000 }));
});

afterAll(async () => {
  await server?.close(100);
  await harness?.stop();
});

const invalid = Code.InvalidArgument;
const minute = 60_000;
const hour = 60 * minute;
const day = 24 * hour;

const emailOf = (projectId: string, change: Partial<EmailActivityFacts> = {}): EmailActivityFacts => ({
  id: randomUUID(),
  projectId,
  contactId: randomUUID(),
  toEmail: randomRecipient(),
  category: "TRANSACTIONAL",
  campaignId: null,
  workflowId: null,
  messageId: `<${randomUUID()}@test>`,
  attempts: 1,
  ...change,
});

/** Records activity the way the dispatcher and the tracking endpoints do. */
const record = (
  type: EmailActivityType,
  email: EmailActivityFacts,
  details: { reason?: string; url?: string; occurredAt?: Date } = {},
): Promise<void> => harness.db.$transaction((tx) => writeEmailActivity(tx, type, email, details));

const listAll = async (projectId: string, query: { limit?: number; types?: string[] } = {}) => {
  const ids: string[] = [];
  let cursor = "";
  do {
    const page = await activity.listActivity({ projectId, cursor, ...query });
    ids.push(...page.activities.map((item) => item.id));
    cursor = page.cursor;
  } while (cursor);
  return ids;
};

describe("email activity, as sending records it", () => {
  it("records every step the dispatcher takes, with the event id of its outbox event, and answers it in the feed", async () => {
    const projectId = newProjectId();
    const domain = await harness.addDomain(projectId);
    const dispatcher = harness.startDispatcher();
    try {
      const delivered = randomRecipient("ok");
      const refused = randomRecipient("gone");
      harness.sink.rejectRecipient(refused, { code: 550 });
      const contactId = randomUUID();
      const campaignId = randomUUID();
      const send = (to: string) =>
        harness.emails.enqueueEmail({
          projectId,
          contactId,
          campaignId,
          kind: EmailKind.CAMPAIGN,
          to: { email: to },
          from: { email: `news@${domain.domain}` },
          subject: "Spring sale",
          html: "<p>Hello</p>",
        });
      const sent = await send(delivered);
      const bounced = await send(refused);
      for (const [id, status] of [
        [sent.emailId, EmailStatus.SENT],
        [bounced.emailId, EmailStatus.BOUNCED],
      ] as const) {
        await eventually(async () => (await harness.emails.getEmail({ projectId, id })).email?.status === status);
      }

      const page = await activity.listActivity({ projectId });
      expect(page.total).toBe(2n);
      const byEmail = new Map(page.activities.map((item) => [item.emailId, item]));
      expect(byEmail.get(sent.emailId)).toMatchObject({
        type: "email.sent",
        projectId,
        contactId,
        campaignId,
        recipient: delivered,
        category: "CAMPAIGN",
        reason: "",
      });
      expect(byEmail.get(bounced.emailId)).toMatchObject({
        type: "email.bounce",
        recipient: refused,
        reason: expect.stringMatching(/550/),
      });

      // The feed and the published events are the same facts: one id each, written together.
      const published = await emailActivityOf(harness.db, projectId);
      expect(published.map((event) => event.envelope.eventId).sort()).toEqual(page.activities.map((item) => item.id).sort());
      for (const event of published) {
        const item = page.activities.find((candidate) => candidate.id === event.envelope.eventId);
        expect(item?.type).toBe(event.envelope.type);
        expect(item?.occurredAt).toEqual(event.envelope.occurredAt);
      }
    } finally {
      await dispatcher.stop();
    }
  });

  it("writes the feed row and the outbox row in the caller's transaction: a rollback leaves neither", async () => {
    const projectId = newProjectId();
    const email = emailOf(projectId);
    await expect(
      harness.db.$transaction(async (tx) => {
        await writeEmailActivity(tx, "email.open", email);
        throw new Error("the status change failed");
      }),
    ).rejects.toThrow("the status change failed");
    expect(await harness.db.emailActivity.count({ where: { projectId } })).toBe(0);
    expect(await emailActivityOf(harness.db, projectId)).toEqual([]);

    await record("email.click", email, { url: "https://shop.example/sale?utm=1" });
    const [click] = (await activity.listActivity({ projectId })).activities;
    expect(click).toMatchObject({ type: "email.click", url: "https://shop.example/sale?utm=1", emailId: email.id });
    const [event] = await emailActivityOf(harness.db, projectId);
    expect(event?.payload?.url).toBe("https://shop.example/sale?utm=1");
    expect(event?.envelope.eventId).toBe(click?.id);
  });
});

describe("ListActivity", () => {
  it("pages newest first with a cursor that stays stable while activity arrives, total on the first page only", async () => {
    const projectId = newProjectId();
    const base = Date.now() - hour;
    // Three share one instant: the id breaks the tie, so none is skipped or repeated across pages.
    const times = [0, 1, 2, 3, 3, 3, 4, 5, 6, 7, 8, 9].map((offset) => new Date(base + offset * 1000));
    for (const occurredAt of times) await record("email.sent", emailOf(projectId), { occurredAt });

    const first = await activity.listActivity({ projectId, limit: 5 });
    expect(first).toMatchObject({ total: 12n, hasMore: true });
    expect(first.activities).toHaveLength(5);
    // Newer activity after the first page does not shift the next pages.
    await record("email.open", emailOf(projectId));
    const second = await activity.listActivity({ projectId, limit: 5, cursor: first.cursor });
    expect(second).toMatchObject({ total: 0n, hasMore: true });
    const third = await activity.listActivity({ projectId, limit: 5, cursor: second.cursor });
    expect(third).toMatchObject({ total: 0n, hasMore: false, cursor: "" });
    const paged = [...first.activities, ...second.activities, ...third.activities];
    expect(paged).toHaveLength(12);
    expect(new Set(paged.map((item) => item.id)).size).toBe(12);
    const instants = paged.map((item) => (item.occurredAt ? timestampDate(item.occurredAt).getTime() : 0));
    expect(instants).toEqual([...instants].sort((a, b) => b - a));
    expect(instants.at(0)).toBe(base + 9000);

    // The default page is 20, and more than 100 is 100.
    expect((await activity.listActivity({ projectId })).activities).toHaveLength(13);
    for (let index = 0; index < 100; index++) await record("email.deferred", emailOf(projectId));
    expect((await activity.listActivity({ projectId, limit: 500 })).activities).toHaveLength(100);
    expect(await listAll(projectId, { limit: 100 })).toHaveLength(113);
  });

  it("filters by types, email and contact, and tells the filtered total", async () => {
    const projectId = newProjectId();
    const email = emailOf(projectId);
    await record("email.sent", email);
    await record("email.open", email);
    await record("email.open", email);
    await record("email.click", email, { url: "https://a.example" });
    await record("email.sent", emailOf(projectId));

    const opens = await activity.listActivity({ projectId, types: ["email.open"] });
    expect(opens.total).toBe(2n);
    expect(opens.activities.every((item) => item.type === "email.open")).toBe(true);
    expect((await activity.listActivity({ projectId, types: ["email.open", "EMAIL.CLICK"] })).total).toBe(3n);
    expect((await activity.listActivity({ projectId, emailId: email.id })).total).toBe(4n);
    expect((await activity.listActivity({ projectId, contactId: email.contactId ?? "" })).total).toBe(4n);
    expect((await activity.listActivity({ projectId, emailId: email.id, types: ["email.sent"] })).total).toBe(1n);
    // An id that is not a uuid names nothing.
    expect((await activity.listActivity({ projectId, emailId: "nope" })).activities).toEqual([]);
  });

  it("refuses an unknown type, a cursor it did not give, and a malformed project id", async () => {
    const projectId = newProjectId();
    const unknown = await expectFailure(activity.listActivity({ projectId, types: ["email.opened"] }), invalid, "INVALID_ACTIVITY_TYPE");
    expect(errorDetailOf(unknown)?.fieldViolations).toEqual([expect.objectContaining({ field: "type", received: '"email.opened"' })]);
    await expectFailure(activity.listActivity({ projectId, cursor: "not-a-cursor" }), invalid, "INVALID_CURSOR");
    const forged = Buffer.from(JSON.stringify({ occurredAt: "yesterday", id: "x" })).toString("base64url");
    await expectFailure(activity.listActivity({ projectId, cursor: forged }), invalid, "INVALID_CURSOR");
    await expectFailure(activity.listActivity({ projectId: "p1" }), invalid, "INVALID_PROJECT_ID");
  });

  it("never answers another project's activity", async () => {
    const mine = newProjectId();
    const theirs = newProjectId();
    const email = emailOf(theirs);
    await record("email.sent", email);
    await record("email.open", email);
    expect(await activity.listActivity({ projectId: mine })).toMatchObject({ activities: [], total: 0n, hasMore: false });
    expect((await activity.listActivity({ projectId: mine, emailId: email.id })).activities).toEqual([]);
    expect((await activity.getActivityStats({ projectId: mine })).total).toBe(0n);
    expect((await activity.listActivityTypes({ projectId: mine })).types).toEqual([]);
    expect((await activity.getRecentActivityCount({ projectId: mine })).count).toBe(0n);
    const series = await activity.getTimeseries({ projectId: mine, interval: TimeseriesInterval.HOUR });
    expect(series.buckets.every((bucket) => bucket.sent === 0n && bucket.opened === 0n)).toBe(true);
  });
});

describe("stats, recent counts and types", () => {
  it("counts by type and period, and rates over distinct sent emails", async () => {
    const projectId = newProjectId();
    const now = Date.now();
    const ago = (ms: number) => ({ occurredAt: new Date(now - ms) });
    const emails = Array.from({ length: 4 }, () => emailOf(projectId));
    const [a, b, c, d] = emails as [EmailActivityFacts, EmailActivityFacts, EmailActivityFacts, EmailActivityFacts];
    await record("email.sent", a, ago(hour));
    await record("email.sent", b, ago(2 * day));
    await record("email.sent", c, ago(10 * day));
    // Bounced at once: handed to the provider, never accepted.
    await record("email.bounce", d, { ...ago(40 * day), reason: "550 5.1.1 no such user" });
    // Two opens of one email are one opened email.
    await record("email.open", a, ago(minute));
    await record("email.open", a, ago(minute));
    await record("email.open", b, ago(day + hour));
    await record("email.click", a, { ...ago(minute), url: "https://x.example" });
    await record("email.complaint", b, ago(hour));
    await record("email.deferred", emailOf(projectId), ago(hour));

    const stats = await activity.getActivityStats({ projectId });
    expect(stats).toMatchObject({ total: 10n, last24Hours: 6n, last7Days: 8n, last30Days: 9n });
    const byType = Object.fromEntries(stats.byType.map((row) => [row.type, row]));
    expect(Object.keys(byType)).toHaveLength(10);
    expect(byType["email.sent"]).toMatchObject({ total: 3n, last24Hours: 1n, last7Days: 2n, last30Days: 3n });
    expect(byType["email.open"]).toMatchObject({ total: 3n, last24Hours: 2n, last7Days: 3n });
    expect(byType["email.delivery"]).toMatchObject({ total: 0n, last24Hours: 0n });
    expect(stats.emails).toMatchObject({ sent: 4n, opened: 2n, clicked: 1n, bounced: 1n, complained: 1n });
    expect(stats.rates).toMatchObject({ openRate: 0.5, clickRate: 0.25, bounceRate: 0.25, complaintRate: 0.25 });

    const empty = await activity.getActivityStats({ projectId: newProjectId() });
    expect(empty.rates).toMatchObject({ openRate: 0, clickRate: 0, bounceRate: 0, complaintRate: 0 });
    expect(empty.byType.every((row) => row.total === 0n)).toBe(true);

    // Recent counts: 24 hours by default, any window up to 366 days, optionally of some types.
    expect((await activity.getRecentActivityCount({ projectId })).count).toBe(6n);
    expect((await activity.getRecentActivityCount({ projectId, windowSeconds: 600n })).count).toBe(3n);
    expect((await activity.getRecentActivityCount({ projectId, windowSeconds: 600n, types: ["email.open"] })).count).toBe(2n);
    expect((await activity.getRecentActivityCount({ projectId, windowSeconds: BigInt(366 * 86_400) })).count).toBe(10n);
    const recent = await activity.getRecentActivityCount({ projectId, windowSeconds: 3600n });
    expect(Math.abs((recent.since ? timestampDate(recent.since).getTime() : 0) - (Date.now() - hour))).toBeLessThan(30_000);
    await expectFailure(activity.getRecentActivityCount({ projectId, windowSeconds: BigInt(367 * 86_400) }), invalid, "INVALID_WINDOW");

    // Types: those present, most frequent first.
    const { types } = await activity.listActivityTypes({ projectId });
    expect(types.map((row) => [row.type, row.count])).toEqual([
      ["email.open", 3n],
      ["email.sent", 3n],
      ["email.bounce", 1n],
      ["email.click", 1n],
      ["email.complaint", 1n],
      ["email.deferred", 1n],
    ]);
    const sentType = types.find((row) => row.type === "email.sent");
    expect(sentType?.lastSeenAt && timestampDate(sentType.lastSeenAt).getTime()).toBe(now - hour);
  });
});

describe("GetTimeseries", () => {
  it("answers every UTC bucket of the range, zero-filled, with each series counted", async () => {
    const projectId = newProjectId();
    const at = (text: string) => ({ occurredAt: new Date(text) });
    const email = emailOf(projectId);
    await record("email.sent", email, at("2025-03-01T09:00:00Z"));
    await record("email.sent", emailOf(projectId), at("2025-03-01T23:59:59.999Z"));
    await record("email.open", email, at("2025-03-03T00:00:00Z"));
    await record("email.click", email, at("2025-03-03T10:00:00Z"));
    await record("email.bounce", emailOf(projectId), at("2025-03-03T11:00:00Z"));
    await record("email.delivery", email, at("2025-03-01T09:00:01Z"));
    await record("email.complaint", email, at("2025-03-03T12:00:00Z"));
    // Outside the range on both sides.
    await record("email.sent", emailOf(projectId), at("2025-02-28T23:59:59.999Z"));
    await record("email.sent", emailOf(projectId), at("2025-03-04T00:00:00Z"));

    const days = await activity.getTimeseries({
      projectId,
      from: timestampFromDate(new Date("2025-03-01T12:00:00Z")),
      to: timestampFromDate(new Date("2025-03-03T08:00:00Z")),
      interval: TimeseriesInterval.DAY,
    });
    expect(days.interval).toBe(TimeseriesInterval.DAY);
    expect(days.from && timestampDate(days.from).toISOString()).toBe("2025-03-01T00:00:00.000Z");
    expect(days.to && timestampDate(days.to).toISOString()).toBe("2025-03-04T00:00:00.000Z");
    const series = days.buckets.map((bucket) => ({
      start: bucket.start && timestampDate(bucket.start).toISOString(),
      sent: Number(bucket.sent),
      delivered: Number(bucket.delivered),
      opened: Number(bucket.opened),
      clicked: Number(bucket.clicked),
      bounced: Number(bucket.bounced),
      complained: Number(bucket.complained),
    }));
    expect(series).toEqual([
      { start: "2025-03-01T00:00:00.000Z", sent: 2, delivered: 1, opened: 0, clicked: 0, bounced: 0, complained: 0 },
      { start: "2025-03-02T00:00:00.000Z", sent: 0, delivered: 0, opened: 0, clicked: 0, bounced: 0, complained: 0 },
      { start: "2025-03-03T00:00:00.000Z", sent: 0, delivered: 0, opened: 1, clicked: 1, bounced: 1, complained: 1 },
    ]);

    const hours = await activity.getTimeseries({
      projectId,
      from: timestampFromDate(new Date("2025-03-03T00:00:00Z")),
      to: timestampFromDate(new Date("2025-03-03T11:30:00Z")),
      interval: TimeseriesInterval.HOUR,
    });
    expect(hours.buckets).toHaveLength(12);
    expect(hours.buckets.map((bucket) => Number(bucket.opened + bucket.clicked + bucket.bounced))).toEqual([
      1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1,
    ]);
  });

  it("defaults to the last 30 days, and refuses ranges beyond 366 days or 31 days of hours, or from after to", async () => {
    const projectId = newProjectId();
    await record("email.sent", emailOf(projectId));
    const recent = await activity.getTimeseries({ projectId });
    expect(recent.interval).toBe(TimeseriesInterval.DAY);
    expect(recent.buckets).toHaveLength(30);
    expect(recent.buckets.at(-1)?.sent).toBe(1n);
    expect((await activity.getTimeseries({ projectId, interval: TimeseriesInterval.HOUR })).buckets).toHaveLength(24);

    const from = new Date("2024-01-01T00:00:00Z");
    const span = (ms: number, interval: TimeseriesInterval) =>
      activity.getTimeseries({ projectId, from: timestampFromDate(from), to: timestampFromDate(new Date(from.getTime() + ms)), interval });
    expect((await span(365 * day, TimeseriesInterval.DAY)).buckets).toHaveLength(366);
    expect((await span(31 * day - hour, TimeseriesInterval.HOUR)).buckets).toHaveLength(744);
    for (const [ms, interval] of [
      [366 * day, TimeseriesInterval.DAY],
      [31 * day, TimeseriesInterval.HOUR],
    ] as const) {
      await expectFailure(span(ms, interval), invalid, "RANGE_TOO_LARGE");
    }
    await expectFailure(span(-day, TimeseriesInterval.DAY), invalid, "INVALID_RANGE");
  });
});
