import { randomUUID } from "node:crypto";
import { createClient } from "@connectrpc/connect";
import { createRpcTransport } from "@herald/platform";
import { DomainsService } from "@herald/proto/herald/delivery/v1/domains_service_pb";
import {
  createTestDatabase,
  freePort,
  type ServiceProcess,
  startService,
  startTestDnsServer,
  startTestSmtpSink,
  type TestDatabase,
  type TestDnsServer,
  type TestSmtpSink,
  waitUntil,
} from "@herald/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

/** 16 batches of CAMPAIGN_BATCH_SIZE: the kill lands between two of them, with most of the fan-out to come. */
const recipients = 4_000;

/**
 * Contacts, delivery and campaigns of their own (their own database, SMTP sink and DNS server),
 * and a 4,000-recipient fan-out killed with SIGKILL halfway, in campaigns and then in delivery (and campaigns stopped
 * with SIGTERM, as a rolling restart stops it, which hands the fan-out back at once):
 * every recipient is enqueued exactly once, and the campaign ends SENT. With delivery killed the
 * campaign sends from a verified domain, so that its emails really go out: every recipient gets
 * one, and the only duplicates are copies with the same Message-ID (an attempt the kill cut off
 * after the relay took it, sent again).
 */
describe("a 4,000-recipient fan-out killed halfway", () => {
  const herald = inject("herald");
  let database: TestDatabase;
  let sink: TestSmtpSink;
  let dns: TestDnsServer;
  let pool: pg.Pool;
  const ports: Record<"contacts" | "delivery" | "campaigns", number> = { contacts: 0, delivery: 0, campaigns: 0 };
  const processes: Partial<Record<keyof typeof ports, ServiceProcess>> = {};

  const urlOf = (name: keyof typeof ports) => `http://127.0.0.1:${ports[name]}`;
  const start = async (name: keyof typeof ports, timeoutMs = 90_000) => {
    const started = await startService(
      name,
      { databaseUrl: database.databaseUrl, redisUrl: herald.redisUrl, kafkaBrokers: herald.kafkaBrokers },
      ports[name],
      {
        CONTACTS_URL: urlOf("contacts"),
        DELIVERY_URL: urlOf("delivery"),
        CAMPAIGNS_URL: urlOf("campaigns"),
        SMTP_URL: sink.url,
        DNS_SERVERS: dns.address,
        DNS_TIMEOUT_MS: "500",
        // Many small batches, so that a kill lands between two of them; a dead owner's lease lapses in seconds.
        CAMPAIGN_BATCH_SIZE: "250",
        CAMPAIGN_FANOUT_LEASE_MS: "3000",
        CAMPAIGN_POLL_INTERVAL_MS: "200",
        // The emails a killed delivery held are claimed again after seconds, not the default two minutes.
        SEND_LEASE_MS: "6000",
        SEND_TIMEOUT_MS: "3000",
      },
      timeoutMs,
    );
    processes[name] = started.process;
  };

  beforeAll(async () => {
    database = await createTestDatabase(herald.databaseUrl);
    [sink, dns] = await Promise.all([startTestSmtpSink(), startTestDnsServer()]);
    pool = new pg.Pool({ connectionString: database.databaseUrl, max: 2 });
    // An idle connection the server ends (the database is dropped at the end, its backends terminated) is no failure of the test.
    pool.on("error", () => {});
    for (const name of Object.keys(ports) as Array<keyof typeof ports>) ports[name] = await freePort();
    await Promise.all([start("contacts"), start("delivery"), start("campaigns")]);
  }, 300_000);

  afterAll(async () => {
    await Promise.all(Object.values(processes).map((process) => process?.stop()));
    await pool?.end();
    await Promise.all([sink?.stop(), dns?.stop()]);
    await database?.drop();
  }, 120_000);

  /** A sending domain of the project, verified through delivery as the gateway's POST /domains and verify would. */
  async function verifiedDomain(projectId: string): Promise<string> {
    const domains = createClient(DomainsService, createRpcTransport({ baseUrl: urlOf("delivery"), timeoutMs: 30_000 }));
    const created = await domains.createDomain({ projectId, domain: `crash-${randomUUID().slice(0, 8)}.herald.test` });
    const dkim = created.domain?.records.find((record) => record.name.includes("._domainkey."));
    if (!created.domain || !dkim) throw new Error("the domain has no DKIM record");
    dns.setTxt(dkim.name, [dkim.value]);
    expect((await domains.verifyDomain({ projectId, id: created.domain.id })).domain?.verified).toBe(true);
    return created.domain.domain;
  }

  /**
   * A project of `recipients` subscribed contacts at `<run>.example` and a campaign to all of them from `from`,
   * written as the services would have.
   */
  async function sendingCampaign(run: string, from: { projectId: string; address: string }): Promise<{ campaignId: string }> {
    const campaignId = randomUUID();
    await pool.query(
      `INSERT INTO contacts.contacts (project_id, email, subscribed, data)
       SELECT $1::uuid, 'r' || n || '@' || $3 || '.example', true, jsonb_build_object('n', n) FROM generate_series(1, $2::int) AS n`,
      [from.projectId, recipients, run],
    );
    await pool.query(
      `INSERT INTO campaigns.campaigns (id, project_id, name, subject, body, from_address, audience_type, status, sent_at)
       VALUES ($1::uuid, $2::uuid, 'Crash', 'Hello {{ n }}', '<p>Hello {{ n }}, {{ email }}</p>', $3, 'ALL', 'SENDING', now())`,
      [campaignId, from.projectId, from.address],
    );
    return { campaignId };
  }

  const progressOf = async (campaignId: string) =>
    (
      await pool.query<{ status: string; total: number }>(
        "SELECT status, total_recipients AS total FROM campaigns.campaigns WHERE id = $1::uuid",
        [campaignId],
      )
    ).rows[0];

  async function expectEachRecipientOnce(campaignId: string): Promise<void> {
    await waitUntil(async () => (await progressOf(campaignId))?.status === "SENT", { timeoutMs: 240_000 });
    const { rows } = await pool.query<{ emails: string; contacts: string }>(
      "SELECT count(*) AS emails, count(DISTINCT contact_id) AS contacts FROM delivery.emails WHERE campaign_id = $1::uuid",
      [campaignId],
    );
    expect(Number(rows[0]?.emails)).toBe(recipients);
    expect(Number(rows[0]?.contacts)).toBe(recipients);
    expect((await progressOf(campaignId))?.total).toBe(recipients);
  }

  it("campaigns killed: the next process resumes after the last checkpoint and enqueues nobody twice", async () => {
    // An unverified sender: delivery fails each email at once, and the test is about the fan-out alone.
    const { campaignId } = await sendingCampaign("campaigns-killed", { projectId: randomUUID(), address: "news@crash.example" });
    await waitUntil(async () => ((await progressOf(campaignId))?.total ?? 0) >= 1_000, { timeoutMs: 120_000 });
    await processes.campaigns?.stop("SIGKILL");
    expect((await progressOf(campaignId))?.total).toBeLessThan(recipients);
    await start("campaigns");
    await expectEachRecipientOnce(campaignId);
  }, 480_000);

  it("campaigns stopped (a rolling restart): the fan-out is handed back at once, not held until its lease lapses", async () => {
    const { campaignId } = await sendingCampaign("campaigns-stopped", { projectId: randomUUID(), address: "news@crash.example" });
    await waitUntil(async () => ((await progressOf(campaignId))?.total ?? 0) >= 1_000, { timeoutMs: 120_000 });
    await processes.campaigns?.stop("SIGTERM");
    const { rows } = await pool.query<{ owner: string | null; lease: Date | null; total: number }>(
      "SELECT fanout_owner AS owner, fanout_lease_until AS lease, total_recipients AS total FROM campaigns.campaigns WHERE id = $1::uuid",
      [campaignId],
    );
    expect(rows[0]?.total).toBeLessThan(recipients);
    expect(rows[0]).toMatchObject({ owner: null, lease: null });
    await start("campaigns");
    await expectEachRecipientOnce(campaignId);
  }, 480_000);

  it("delivery killed: the fan-out waits for it and resumes, nobody is enqueued twice, and a duplicate only repeats a Message-ID", async () => {
    const projectId = randomUUID();
    const domain = await verifiedDomain(projectId);
    const run = `delivery-killed-${randomUUID().slice(0, 8)}`;
    const { campaignId } = await sendingCampaign(run, { projectId, address: `news@${domain}` });
    // Killed while it is both taking batches and sending: some emails have reached the relay by then.
    const arrived = () => sink.messages().filter((message) => message.to[0]?.endsWith(`@${run}.example`)).length;
    await waitUntil(async () => ((await progressOf(campaignId))?.total ?? 0) >= 1_000 && arrived() > 0, { timeoutMs: 120_000 });
    await processes.delivery?.stop("SIGKILL");
    await start("delivery");
    await expectEachRecipientOnce(campaignId);

    // Every email was sent, and each recipient's copies carry the one Message-ID of its email.
    const { rows } = await pool.query<{ to_email: string; message_id: string; status: string }>(
      "SELECT to_email, message_id, status FROM delivery.emails WHERE campaign_id = $1::uuid",
      [campaignId],
    );
    expect(rows.filter((row) => row.status !== "SENT")).toEqual([]);
    const messageIdOf = new Map(rows.map((row) => [row.to_email, row.message_id]));
    const copies = new Map<string, string[]>();
    for (const message of sink.messages()) {
      const recipient = message.to[0] ?? "";
      if (!recipient.endsWith(`@${run}.example`)) continue;
      const messageId = /^Message-ID:\s*(\S+)/im.exec(message.raw)?.[1] ?? "";
      copies.set(recipient, [...(copies.get(recipient) ?? []), messageId]);
    }
    expect(copies.size).toBe(recipients);
    const foreign = [...copies].filter(([recipient, messageIds]) =>
      messageIds.some((messageId) => messageId !== messageIdOf.get(recipient)),
    );
    expect(foreign).toEqual([]);
    expect(messageIdOf.get(`r1@${run}.example`)).toMatch(new RegExp(`^<[0-9a-f-]{36}@${domain.replaceAll(".", "\\.")}>$`));
  }, 480_000);
});
