import { testDnsClient, testSmtpSinkClient, waitUntil } from "@herald/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { CampaignJson } from "./campaigns.test.js";
import { verifiedDomain } from "./support/domains.js";
import { type CreatedProject, createProject, restClient, type SignedInUser, signUp, uniqueEmail } from "./support/http.js";

const { stack, dns: dnsServer, smtp } = inject("herald");
const call = restClient(stack.gatewayUrl);
const dns = testDnsClient(dnsServer.controlUrl);
const sink = testSmtpSinkClient(smtp.controlUrl);

/**
 * A disabled project's campaigns stop sending and go on where they were once it is enabled again
 * (campaigns' project-status consumer; docs/api-decisions.md "Campaigns of a disabled project").
 */
describe("campaigns of a disabled project", () => {
  let owner: SignedInUser;
  let pool: pg.Pool;

  beforeAll(async () => {
    owner = await signUp(call, "campaign-disabled");
    pool = new pg.Pool({ connectionString: stack.databaseUrl, max: 1 });
  });

  afterAll(async () => {
    await pool?.end();
  });

  /** A project with one subscribed contact and two campaigns scheduled for tomorrow. */
  async function projectWithCampaigns(name: string) {
    const project = await createProject(call, owner.cookie, name);
    const { domain } = await verifiedDomain(call, dns, project.secretKey, "campaign-disabled");
    const recipient = uniqueEmail("recipient");
    expect((await call("POST", "/contacts", { key: project.secretKey, body: { email: recipient, subscribed: true } })).status).toBe(201);
    const ids: string[] = [];
    for (const label of ["scheduled", "sending"]) {
      const created = await call<{ data: CampaignJson }>("POST", "/campaigns", {
        key: project.secretKey,
        body: { name: `${name} ${label}`, subject: `${label} news`, body: "<p>Hi</p>", from: `news@${domain}`, audienceType: "ALL" },
      });
      expect(created.status).toBe(201);
      const scheduledFor = new Date(Date.now() + 86_400_000).toISOString();
      expect(
        (await call("POST", `/campaigns/${created.body.data.id}/send`, { key: project.secretKey, body: { scheduledFor } })).status,
      ).toBe(200);
      ids.push(created.body.data.id);
    }
    return { project, recipient, scheduled: ids[0] ?? "", sending: ids[1] ?? "" };
  }

  const statusOf = async (id: string) =>
    (await pool.query<{ status: string }>("SELECT status FROM campaigns.campaigns WHERE id = $1::uuid", [id])).rows[0]?.status;

  /**
   * Brings a scheduled campaign's time forward to now, or starts it at once (status SENDING, as the fan-out's
   * own start would): no endpoint moves a campaign's clock. `secondsAgo` orders the campaigns the fan-out picks.
   */
  async function makeDue(id: string, secondsAgo: number, state: "SCHEDULED" | "SENDING") {
    await pool.query(
      `UPDATE campaigns.campaigns SET scheduled_for = now() - make_interval(secs => $2), status = $3,
         sent_at = CASE WHEN $3 = 'SENDING' THEN now() - make_interval(secs => $2) ELSE sent_at END
       WHERE id = $1::uuid`,
      [id, secondsAgo, state],
    );
  }

  const setDisabled = async (project: CreatedProject, disabled: boolean) =>
    expect((await call("PATCH", `/users/@me/projects/${project.id}`, { cookie: owner.cookie, body: { disabled } })).status).toBe(200);

  it("holds a disabled project's SCHEDULED and SENDING campaigns while another project's go out; both resume on enable", async () => {
    const stopped = await projectWithCampaigns("Disabled");
    const running = await projectWithCampaigns("Running");
    await setDisabled(stopped.project, true);
    await waitUntil(
      async () =>
        (await pool.query("SELECT 1 FROM campaigns.stopped_projects WHERE project_id = $1::uuid", [stopped.project.id])).rowCount === 1,
      { timeoutMs: 60_000 },
    );

    // The disabled project's campaigns are due first; the running project's come after them in the fan-out's order.
    await makeDue(stopped.scheduled, 120, "SCHEDULED");
    await makeDue(stopped.sending, 120, "SENDING");
    await makeDue(running.scheduled, 60, "SCHEDULED");
    await makeDue(running.sending, 60, "SENDING");
    await waitUntil(async () => (await statusOf(running.scheduled)) === "SENT" && (await statusOf(running.sending)) === "SENT", {
      timeoutMs: 60_000,
    });
    expect(await statusOf(stopped.scheduled)).toBe("SCHEDULED");
    expect(await statusOf(stopped.sending)).toBe("SENDING");
    await waitUntil(async () => (await sink.messages(running.recipient)).length === 2, { timeoutMs: 30_000 });
    expect(await sink.messages(stopped.recipient)).toEqual([]);
    const cursor = await pool.query("SELECT fanout_cursor, total_recipients FROM campaigns.campaigns WHERE id = $1::uuid", [
      stopped.sending,
    ]);
    expect(cursor.rows[0]).toEqual({ fanout_cursor: null, total_recipients: 0 });

    // Enabled again: both go on from where they stopped, and the contact gets each once.
    await setDisabled(stopped.project, false);
    await waitUntil(async () => (await statusOf(stopped.scheduled)) === "SENT" && (await statusOf(stopped.sending)) === "SENT", {
      timeoutMs: 60_000,
    });
    await waitUntil(async () => (await sink.messages(stopped.recipient)).length === 2, { timeoutMs: 30_000 });
    const listed = await call<{ data: CampaignJson[] }>("GET", "/campaigns", { key: stopped.project.secretKey });
    expect(listed.body.data.map((campaign) => [campaign.status, campaign.totalRecipients])).toEqual([
      ["SENT", 1],
      ["SENT", 1],
    ]);
  }, 240_000);
});
