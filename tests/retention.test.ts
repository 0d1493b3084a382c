import { createClient } from "@connectrpc/connect";
import { createRpcTransport } from "@herald/platform";
import { EmailsService } from "@herald/proto/herald/delivery/v1/emails_service_pb";
import { eventually, testDnsClient, testSmtpSinkClient } from "@herald/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { verifiedDomain } from "./support/domains.js";
import { type CreatedProject, createProject, restClient, signUp, uniqueEmail } from "./support/http.js";
import type { ErrorBody } from "./support/resources.js";

const { stack, dns: dnsServer, smtp } = inject("herald");
const call = restClient(stack.gatewayUrl);
const dns = testDnsClient(dnsServer.controlUrl);
const sink = testSmtpSinkClient(smtp.controlUrl);
const emails = createClient(EmailsService, createRpcTransport({ baseUrl: stack.serviceUrls.delivery, timeoutMs: 30_000 }));

type Kinds<T> = { trackedEventsDays: T; emailContentDays: T; activityDays: T };
type RetentionJson = Kinds<number> & { custom: Kinds<boolean>; defaults: Kinds<number>; bounds: Kinds<{ min: number; max: number }> };

/** The stack's deployment windows: the services' defaults (RETENTION_* unset). */
const deploymentDefaults: RetentionJson = {
  trackedEventsDays: 730,
  emailContentDays: 90,
  activityDays: 730,
  custom: { trackedEventsDays: false, emailContentDays: false, activityDays: false },
  defaults: { trackedEventsDays: 730, emailContentDays: 90, activityDays: 730 },
  bounds: { trackedEventsDays: { min: 1, max: 730 }, emailContentDays: { min: 1, max: 730 }, activityDays: { min: 1, max: 730 } },
};

describe("GET/PUT /settings/retention", () => {
  let project: CreatedProject;
  let other: CreatedProject;

  beforeAll(async () => {
    const owner = await signUp(call, "retention-settings");
    project = await createProject(call, owner.cookie, "Retention");
    other = await createProject(call, owner.cookie, "Retention elsewhere");
  }, 60_000);

  it("answers the deployment's defaults and bounds until the project sets its own", async () => {
    const answer = await call<RetentionJson>("GET", "/settings/retention", { key: project.secretKey });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual(deploymentDefaults);
  });

  it("sets windows within the bounds, keeps the omitted ones, and returns one to the default with null", async () => {
    const key = project.secretKey;
    const set = await call<RetentionJson>("PUT", "/settings/retention", { key, body: { trackedEventsDays: 30, emailContentDays: 7 } });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({
      trackedEventsDays: 30,
      emailContentDays: 7,
      activityDays: 730,
      custom: { trackedEventsDays: true, emailContentDays: true, activityDays: false },
    });
    expect((await call<RetentionJson>("GET", "/settings/retention", { key })).body).toEqual(set.body);

    const more = await call<RetentionJson>("PUT", "/settings/retention", { key, body: { activityDays: 60, trackedEventsDays: null } });
    expect(more.body).toMatchObject({
      trackedEventsDays: 730,
      emailContentDays: 7,
      activityDays: 60,
      custom: { trackedEventsDays: false, emailContentDays: true, activityDays: true },
    });

    // Another project's key reads and writes only its own.
    expect((await call<RetentionJson>("GET", "/settings/retention", { key: other.secretKey })).body).toEqual(deploymentDefaults);
    await call("PUT", "/settings/retention", { key: other.secretKey, body: { activityDays: 10, emailContentDays: 5 } });
    expect((await call<RetentionJson>("GET", "/settings/retention", { key })).body).toEqual(more.body);
  });

  it("refuses a window outside the deployment's bounds with 400 RETENTION_OUT_OF_BOUNDS, changing nothing", async () => {
    const key = project.secretKey;
    const before = (await call<RetentionJson>("GET", "/settings/retention", { key })).body;

    const tooLong = await call<ErrorBody>("PUT", "/settings/retention", { key, body: { trackedEventsDays: 20, activityDays: 731 } });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.success).toBe(false);
    expect(tooLong.body.error).toMatchObject({ code: "RETENTION_OUT_OF_BOUNDS", statusCode: 400 });
    expect(tooLong.body.error.errors).toEqual([expect.objectContaining({ field: "activityDays", code: "out_of_bounds", received: "731" })]);

    // Content expires before the email's record: its window cannot be the longer one.
    const contentLonger = await call<ErrorBody>("PUT", "/settings/retention", { key, body: { emailContentDays: 90, activityDays: 30 } });
    expect(contentLonger.status).toBe(400);
    expect(contentLonger.body.error.code).toBe("RETENTION_OUT_OF_BOUNDS");
    expect(contentLonger.body.error.errors?.[0]?.field).toBe("emailContentDays");

    expect((await call<RetentionJson>("GET", "/settings/retention", { key })).body).toEqual(before);
  });

  it("refuses a body that is not whole days with 422, and a public key with 401", async () => {
    const key = project.secretKey;
    for (const body of [{ trackedEventsDays: 0 }, { activityDays: 1.5 }, { emailContentDays: "7" }, {}, { forever: true }]) {
      const answer = await call<ErrorBody>("PUT", "/settings/retention", { key, body });
      expect(answer.status, JSON.stringify(body)).toBe(422);
      expect(answer.body.error.code).toBe("VALIDATION_ERROR");
    }
    expect((await call("GET", "/settings/retention", { key: project.publicKey })).status).toBe(401);
    expect((await call("PUT", "/settings/retention", { key: project.publicKey, body: { activityDays: 5 } })).status).toBe(401);
  });
});

describe("expiry", () => {
  let pool: pg.Pool;
  let project: CreatedProject;
  let key: string;
  let domain: string;

  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: stack.databaseUrl, max: 2 });
    const owner = await signUp(call, "retention-expiry");
    project = await createProject(call, owner.cookie, "Expiry");
    key = project.secretKey;
    domain = (await verifiedDomain(call, dns, key, "expiry")).domain;
  }, 120_000);

  afterAll(async () => {
    await pool?.end();
  });

  const count = async (sql: string) => Number((await pool.query(sql, [project.id])).rows[0]?.n ?? 0);
  const daysAgo = (days: number) => `now() - interval '${days} days'`;

  it("expires events, then email content, then activity and email records, keeping contacts' and campaigns' counters", async () => {
    const address = uniqueEmail("expiring");
    expect((await call("POST", "/v1/track", { key: project.publicKey, body: { email: address, event: "signed-up" } })).status).toBe(200);
    const campaign = await call<{ data: { id: string } }>("POST", "/campaigns", {
      key,
      body: { name: "Old news", subject: "Old news", body: "<p>Old news</p>", from: `news@${domain}`, audienceType: "ALL" },
    });
    expect(campaign.status).toBe(201);
    const campaignId = campaign.body.data.id;
    expect((await call("POST", `/campaigns/${campaignId}/send`, { key, body: {} })).status).toBe(200);
    await sink.waitForMessages(1, { to: address, timeoutMs: 30_000 });
    // Once the campaign is SENT: its email.sent can be counted before it leaves SENDING.
    const statsBefore = await eventually(async () => {
      const stats = (await call<Record<string, unknown>>("GET", `/campaigns/${campaignId}/stats`, { key })).body;
      return stats.sent === 1 && stats.status === "SENT" ? stats : undefined;
    });
    await eventually(async () => (await count("SELECT count(*) AS n FROM delivery.email_activity WHERE project_id = $1")) > 0);
    const contactsBefore = (await call<{ total: number }>("GET", "/contacts", { key })).body.total;
    const [email] = (await pool.query<{ id: string }>("SELECT id::text AS id FROM delivery.emails WHERE project_id = $1", [project.id]))
      .rows;
    if (!email) throw new Error("no email recorded");

    // Age the project's history by 40 days, as if it had been written then (rows move to older partitions).
    await pool.query(`UPDATE contacts.events SET created_at = ${daysAgo(40)} WHERE project_id = $1`, [project.id]);
    await pool.query(`UPDATE delivery.emails SET created_at = ${daysAgo(40)} WHERE project_id = $1`, [project.id]);
    await pool.query(`UPDATE delivery.email_activity SET occurred_at = ${daysAgo(40)} WHERE project_id = $1`, [project.id]);
    const eventsBefore = await count("SELECT count(*) AS n FROM contacts.events WHERE project_id = $1");
    expect(eventsBefore).toBeGreaterThan(0);

    // Events: a 30-day window shows none of them at once, and the service deletes them within moments.
    expect((await call("PUT", "/settings/retention", { key, body: { trackedEventsDays: 30 } })).status).toBe(200);
    expect((await call<{ data: unknown[]; total: number }>("GET", "/events", { key })).body).toMatchObject({ data: [], total: 0 });
    await eventually(async () => (await count("SELECT count(*) AS n FROM contacts.events WHERE project_id = $1")) === 0);

    // Content: emptied, the record kept with its status, times and counters.
    expect((await call("PUT", "/settings/retention", { key, body: { emailContentDays: 30 } })).status).toBe(200);
    const expired = await eventually(async () => {
      const answer = await emails.getEmail({ projectId: project.id, id: email.id });
      return answer.email?.contentExpired ? answer.email : undefined;
    });
    expect(expired).toMatchObject({ html: "", subject: "Old news", to: { email: address } });
    expect(expired.sentAt).toBeDefined();
    const [stored] = (await pool.query("SELECT html, headers, attachments, status FROM delivery.emails WHERE id = $1", [email.id])).rows;
    expect(stored).toMatchObject({ html: "", headers: {}, attachments: [], status: expect.stringMatching(/^(SENT|DELIVERED)$/) });
    expect(await count("SELECT count(*) AS n FROM delivery.email_activity WHERE project_id = $1")).toBeGreaterThan(0);

    // Activity and the email records: gone from the feed at once, and from the tables within moments.
    expect((await call("PUT", "/settings/retention", { key, body: { activityDays: 30 } })).status).toBe(200);
    expect((await call<{ data: unknown[] }>("GET", "/activity", { key })).body.data).toEqual([]);
    await eventually(async () => (await count("SELECT count(*) AS n FROM delivery.email_activity WHERE project_id = $1")) === 0);
    await eventually(async () => (await count("SELECT count(*) AS n FROM delivery.emails WHERE project_id = $1")) === 0);

    // What the counters said stays said.
    expect((await call<Record<string, unknown>>("GET", `/campaigns/${campaignId}/stats`, { key })).body).toEqual(statsBefore);
    expect((await call<{ sentCount: number }>("GET", `/campaigns/${campaignId}`, { key })).body.sentCount).toBe(1);
    expect((await call<{ total: number }>("GET", "/contacts", { key })).body.total).toBe(contactsBefore);
  }, 180_000);

  it("counts no expired event or activity in stats, names and types, before the expiry pass deletes them", async () => {
    const owner = await signUp(call, "retention-stats");
    const quiet = await createProject(call, owner.cookie, "Expired, not yet deleted");
    const quietDomain = (await verifiedDomain(call, dns, quiet.secretKey, "expired-stats")).domain;
    const countOf = async (sql: string) => Number((await pool.query(sql, [quiet.id])).rows[0]?.n ?? 0);
    const age = (sql: string) => pool.query(sql, [quiet.id]);
    for (const event of ["canary", "stale", "fresh"]) {
      const tracked = await call("POST", "/v1/track", { key: quiet.publicKey, body: { email: uniqueEmail(event), event } });
      expect(tracked.status).toBe(200);
    }
    const [canary, stale] = [uniqueEmail("canary-mail"), uniqueEmail("stale-mail")];
    for (const to of [canary, stale]) {
      const sent = await call("POST", "/v1/send", {
        key: quiet.secretKey,
        body: { to, from: `hello@${quietDomain}`, subject: "Soon expired", body: "<p>Hello</p>" },
      });
      expect(sent.status).toBe(200);
    }
    const activityOf = (to: string) =>
      `project_id = $1 AND email_id IN (SELECT id FROM delivery.emails WHERE project_id = $1 AND to_email = '${to}')`;
    const activityCount = (to: string) => countOf(`SELECT count(*) AS n FROM delivery.email_activity WHERE ${activityOf(to)}`);
    const ageActivity = (to: string) => age(`UPDATE delivery.email_activity SET occurred_at = ${daysAgo(40)} WHERE ${activityOf(to)}`);
    await eventually(
      async () =>
        (await countOf(`SELECT count(*) AS n FROM delivery.email_activity WHERE ${activityOf(stale)} AND type = 'email.sent'`)) > 0,
    );
    await eventually(
      async () =>
        (await countOf(`SELECT count(*) AS n FROM delivery.email_activity WHERE ${activityOf(canary)} AND type = 'email.sent'`)) > 0,
    );

    // The canaries, aged past the windows the project then sets, show that the pass a new window runs at once is over.
    await age(`UPDATE contacts.events SET created_at = ${daysAgo(40)} WHERE project_id = $1 AND name = 'canary'`);
    await ageActivity(canary);
    expect(
      (
        await call("PUT", "/settings/retention", {
          key: quiet.secretKey,
          body: { trackedEventsDays: 30, emailContentDays: 30, activityDays: 30 },
        })
      ).status,
    ).toBe(200);
    await eventually(
      async () => (await countOf("SELECT count(*) AS n FROM contacts.events WHERE project_id = $1 AND name = 'canary'")) === 0,
    );
    await eventually(async () => (await activityCount(canary)) === 0);

    // Now aged past the windows, with the next pass an hour away: still stored, and counted nowhere.
    await age(`UPDATE contacts.events SET created_at = ${daysAgo(40)} WHERE project_id = $1 AND name = 'stale'`);
    await ageActivity(stale);
    expect(await countOf("SELECT count(*) AS n FROM contacts.events WHERE project_id = $1 AND name = 'stale'")).toBe(1);
    const staleActivity = await activityCount(stale);
    expect(staleActivity).toBeGreaterThan(0);

    // Every count the API gives against the rows within the window, stale ones left out: equal once the project's
    // writes settle (the contacts service puts the emails' activity on its contacts' timelines as events of its own).
    const get = async <T>(path: string) => (await call<T>("GET", path, { key: quiet.secretKey })).body;
    const inWindow = (table: string, time: string, more = "") =>
      countOf(`SELECT count(*) AS n FROM ${table} WHERE project_id = $1 AND ${time} >= now() - interval '30 days'${more}`);
    await eventually(async () => {
      const [stats, page, events] = await Promise.all([
        get<{ total: number; last30Days: number }>("/events/stats"),
        get<{ total: number }>("/events"),
        inWindow("contacts.events", "created_at"),
      ]);
      return stats.total === events && stats.last30Days === events && page.total === events;
    });
    const names = (await get<{ names: Array<{ name: string }> }>("/events/names")).names.map((row) => row.name);
    expect(names).toContain("fresh");
    expect(names).not.toContain("stale");
    await eventually(async () => {
      const [stats, types, recent, series, activity, sent, sentEmails] = await Promise.all([
        get<{ total: number; emails: { sent: number } }>("/activity/stats"),
        get<{ types: Array<{ count: number }> }>("/activity/types"),
        get<{ count: number }>("/activity/recent-count?hours=8784"),
        get<{ buckets: Array<{ sent: number }> }>(`/analytics/timeseries?from=${new Date(Date.now() - 60 * 86_400_000).toISOString()}`),
        inWindow("delivery.email_activity", "occurred_at"),
        inWindow("delivery.email_activity", "occurred_at", " AND type = 'email.sent'"),
        countOf(
          "SELECT count(DISTINCT email_id) AS n FROM delivery.email_activity WHERE project_id = $1 AND occurred_at >= now() - interval '30 days' AND type IN ('email.sent', 'email.bounce')",
        ),
      ]);
      return (
        stats.total === activity &&
        stats.emails.sent === sentEmails &&
        types.types.reduce((sum, type) => sum + type.count, 0) === activity &&
        recent.count === activity &&
        series.buckets.reduce((sum, bucket) => sum + bucket.sent, 0) === sent
      );
    });

    // The check above was made before the deletion it must not depend on.
    expect(await activityCount(stale)).toBe(staleActivity);
  }, 180_000);
});
