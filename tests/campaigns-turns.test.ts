import { randomUUID } from "node:crypto";
import { waitUntil } from "@herald/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

const { stack } = inject("herald");

/**
 * Campaigns' fan-outs take turns (CAMPAIGN_FANOUT_TURN_MS, 0 in the shared stack: one batch of CAMPAIGN_BATCH_SIZE, 500,
 * a turn): a campaign sent while another project's large fan-out runs is enqueued before that one ends, instead of after.
 */
describe("campaign fan-outs in turns", () => {
  let pool: pg.Pool;

  beforeAll(() => {
    pool = new pg.Pool({ connectionString: stack.databaseUrl, max: 2 });
  });

  afterAll(async () => {
    await pool?.end();
  });

  /** A project of `recipients` subscribed contacts and a SENDING campaign to all of them, written as the services would have. */
  async function sendingCampaign(recipients: number, sentSecondsAgo: number): Promise<string> {
    const projectId = randomUUID();
    const campaignId = randomUUID();
    await pool.query(
      `INSERT INTO contacts.contacts (project_id, email, subscribed, data)
       SELECT $1::uuid, 'r' || n || '@turns-' || $3 || '.example', true, '{}'::jsonb FROM generate_series(1, $2::int) AS n`,
      [projectId, recipients, campaignId.slice(0, 8)],
    );
    // An unverified sender: delivery fails each email at once; what counts here is when each was enqueued.
    await pool.query(
      `INSERT INTO campaigns.campaigns (id, project_id, name, subject, body, from_address, audience_type, status, sent_at)
       VALUES ($1::uuid, $2::uuid, 'Turns', 'Hello', '<p>Hello</p>', 'news@turns.example', 'ALL', 'SENDING', now() - make_interval(secs => $3))`,
      [campaignId, projectId, sentSecondsAgo],
    );
    return campaignId;
  }

  const enqueued = async (campaignId: string) =>
    (
      await pool.query<{ emails: number; last: Date | null }>(
        "SELECT count(*)::int AS emails, max(created_at) AS last FROM delivery.emails WHERE campaign_id = $1::uuid",
        [campaignId],
      )
    ).rows[0] ?? { emails: 0, last: null };

  it("enqueues a small campaign before a large one sent first has finished", async () => {
    // Both due at once; the large one was sent first, so it has the first turn.
    const large = await sendingCampaign(4_000, 2);
    const small = await sendingCampaign(20, 1);
    await waitUntil(async () => (await enqueued(large)).emails === 4_000 && (await enqueued(small)).emails === 20, {
      timeoutMs: 120_000,
    });
    const [largeLast, smallLast] = [(await enqueued(large)).last, (await enqueued(small)).last];
    // One after the other, the small campaign's emails would all come after the large one's last batch.
    expect(smallLast?.getTime()).toBeLessThan(largeLast?.getTime() ?? 0);
  }, 150_000);
});
