import { randomUUID } from "node:crypto";
import {
  createTestDatabase,
  freePort,
  type ServiceProcess,
  startService,
  startTestSmtpSink,
  type TestDatabase,
  type TestSmtpSink,
  waitUntil,
} from "@herald/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

const recipients = 10_000;

/**
 * Contacts, delivery and campaigns of their own (their own database), and a 10,000-recipient
 * fan-out killed with SIGKILL halfway, in campaigns and then in delivery: every recipient is
 * enqueued exactly once, and the campaign ends SENT.
 */
describe("a 10,000-recipient fan-out killed halfway", () => {
  const herald = inject("herald");
  let database: TestDatabase;
  let sink: TestSmtpSink;
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
        // Many small batches, so that a kill lands between two of them; a dead owner's lease lapses in seconds.
        CAMPAIGN_BATCH_SIZE: "250",
        CAMPAIGN_FANOUT_LEASE_MS: "3000",
        CAMPAIGN_POLL_INTERVAL_MS: "200",
      },
      timeoutMs,
    );
    processes[name] = started.process;
  };

  beforeAll(async () => {
    database = await createTestDatabase(herald.databaseUrl);
    sink = await startTestSmtpSink();
    pool = new pg.Pool({ connectionString: database.databaseUrl, max: 2 });
    for (const name of Object.keys(ports) as Array<keyof typeof ports>) ports[name] = await freePort();
    await Promise.all([start("contacts"), start("delivery"), start("campaigns")]);
  }, 300_000);

  afterAll(async () => {
    await Promise.all(Object.values(processes).map((process) => process?.stop()));
    await pool?.end();
    await sink?.stop();
    await database?.drop();
  }, 120_000);

  /** A project of `recipients` subscribed contacts and a campaign to all of them, written as the services would have. */
  async function sendingCampaign(): Promise<{ projectId: string; campaignId: string }> {
    const projectId = randomUUID();
    const campaignId = randomUUID();
    await pool.query(
      `INSERT INTO contacts.contacts (project_id, email, subscribed, data)
       SELECT $1::uuid, 'r' || n || '@crash.example', true, jsonb_build_object('n', n) FROM generate_series(1, $2::int) AS n`,
      [projectId, recipients],
    );
    await pool.query(
      `INSERT INTO campaigns.campaigns (id, project_id, name, subject, body, from_address, audience_type, status, sent_at)
       VALUES ($1::uuid, $2::uuid, 'Crash', 'Hello {{ n }}', '<p>Hello {{ n }}, {{ email }}</p>', 'news@crash.example', 'ALL', 'SENDING', now())`,
      [campaignId, projectId],
    );
    return { projectId, campaignId };
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
    const { campaignId } = await sendingCampaign();
    await waitUntil(async () => ((await progressOf(campaignId))?.total ?? 0) >= 2_000, { timeoutMs: 120_000 });
    await processes.campaigns?.stop("SIGKILL");
    expect((await progressOf(campaignId))?.total).toBeLessThan(recipients);
    await start("campaigns");
    await expectEachRecipientOnce(campaignId);
  }, 480_000);

  it("delivery killed: the fan-out waits for it and resumes, and nobody is enqueued twice", async () => {
    const { campaignId } = await sendingCampaign();
    await waitUntil(async () => ((await progressOf(campaignId))?.total ?? 0) >= 2_000, { timeoutMs: 120_000 });
    await processes.delivery?.stop("SIGKILL");
    await start("delivery");
    await expectEachRecipientOnce(campaignId);
  }, 480_000);
});
