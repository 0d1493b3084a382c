import { topics } from "@herald/kafka";
import { CampaignEventSchema } from "@herald/proto/herald/events/v1/campaign_event_pb";
import { testDnsClient, waitUntil } from "@herald/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { CampaignJson } from "./campaigns.test.js";
import { verifiedDomain } from "./support/domains.js";
import { payloadIn, type ReceivedFact, watchTopic } from "./support/event-facts.js";
import { type CreatedProject, createProject, restClient, type SignedInUser, signUp, uniqueEmail } from "./support/http.js";

const { stack, dns: dnsServer, kafkaBrokers } = inject("herald");
const call = restClient(stack.gatewayUrl);
const dns = testDnsClient(dnsServer.controlUrl);

/**
 * campaigns' facts on herald.campaign-events.v1 (the webhooks' campaign.sent and campaign.paused), keyed
 * by the project, read by a consumer of the test's own from the moment before each action.
 */
describe("campaign events on herald.campaign-events.v1", () => {
  let owner: SignedInUser;
  let project: CreatedProject;
  let domain: string;
  let topic: Awaited<ReturnType<typeof watchTopic>>;
  let pool: pg.Pool;

  beforeAll(async () => {
    owner = await signUp(call, "facts-campaigns");
    project = await createProject(call, owner.cookie, "Campaign facts");
    domain = (await verifiedDomain(call, dns, project.secretKey, "facts-campaigns")).domain;
    for (const label of ["reader-a", "reader-b"]) {
      const contact = await call("POST", "/contacts", { key: project.secretKey, body: { email: uniqueEmail(label), subscribed: true } });
      expect(contact.status).toBe(201);
    }
    pool = new pg.Pool({ connectionString: stack.databaseUrl, max: 1 });
    topic = await watchTopic({ brokers: kafkaBrokers, topic: topics.campaignEvents, projectId: project.id });
  });

  afterAll(async () => {
    await topic?.stop();
    await pool?.end();
  });

  const event = (fact: ReceivedFact) => ({ type: fact.envelope.type, ...payloadIn(fact, CampaignEventSchema) });
  const eventsOf = (campaignId: string) => topic.received.map(event).filter((payload) => payload.campaignId === campaignId);
  const createCampaign = async (name: string) => {
    const created = await call<{ data: CampaignJson }>("POST", "/campaigns", {
      key: project.secretKey,
      body: { name, subject: `${name} news`, body: "<p>Hi</p>", from: `news@${domain}`, audienceType: "ALL" },
    });
    expect(created.status).toBe(201);
    return created.body.data.id;
  };

  it("a campaign that reaches SENT is a campaign.sent with its recipients, keyed by the project", async () => {
    const campaignId = await createCampaign("Sent");
    expect((await call("POST", `/campaigns/${campaignId}/send`, { key: project.secretKey, body: {} })).status).toBe(200);
    const sent = await topic.next((fact) => event(fact).campaignId === campaignId, 90_000);
    expect(sent.key).toBe(project.id);
    expect(sent.envelope).toMatchObject({ type: "campaign.sent", contactId: "", source: "campaigns" });
    expect(event(sent)).toMatchObject({ name: "Sent", subject: "Sent news", recipients: 2n, reason: "" });
    expect((await call<CampaignJson>("GET", `/campaigns/${campaignId}`, { key: project.secretKey })).body.status).toBe("SENT");
  }, 120_000);

  it("disabling the project pauses a SENDING campaign: one campaign.paused with the reason, and campaign.sent once it went on", async () => {
    const campaignId = await createCampaign("Paused");
    const scheduledFor = new Date(Date.now() + 86_400_000).toISOString();
    expect((await call("POST", `/campaigns/${campaignId}/send`, { key: project.secretKey, body: { scheduledFor } })).status).toBe(200);
    // SENDING, its fan-out held by a replica that is not there (a lease of a minute), so that it is still sending when the project stops.
    await pool.query(
      `UPDATE campaigns.campaigns SET status = 'SENDING', sent_at = now(), fanout_owner = gen_random_uuid()::text,
         fanout_lease_until = now() + interval '1 minute'
       WHERE id = $1::uuid`,
      [campaignId],
    );
    const setDisabled = async (disabled: boolean) =>
      expect((await call("PATCH", `/users/@me/projects/${project.id}`, { cookie: owner.cookie, body: { disabled } })).status).toBe(200);
    await setDisabled(true);
    const paused = await topic.next((fact) => event(fact).campaignId === campaignId, 60_000);
    expect(paused.key).toBe(project.id);
    expect(event(paused)).toMatchObject({
      type: "campaign.paused",
      name: "Paused",
      subject: "Paused news",
      recipients: 0n,
      reason: "The project is disabled",
    });

    // Enabled again, the campaign goes on (the phantom lease lapsed) and is sent: no second pause.
    await setDisabled(false);
    await waitUntil(
      async () => (await pool.query("SELECT 1 FROM campaigns.stopped_projects WHERE project_id = $1::uuid", [project.id])).rowCount === 0,
      { timeoutMs: 60_000 },
    );
    await pool.query("UPDATE campaigns.campaigns SET fanout_lease_until = now() WHERE id = $1::uuid", [campaignId]);
    await waitUntil(async () => eventsOf(campaignId).length >= 2, { timeoutMs: 90_000 });
    expect(eventsOf(campaignId).map((payload) => [payload.type, payload.recipients])).toEqual([
      ["campaign.paused", 0n],
      ["campaign.sent", 2n],
    ]);
  }, 240_000);
});
