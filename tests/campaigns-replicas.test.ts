import { eventually, type ServiceProcess, startService, testDnsClient, testSmtpSinkClient } from "@herald/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { CampaignJson } from "./campaigns.test.js";
import { verifiedDomain } from "./support/domains.js";
import { createProject, restClient, signUp, uniqueEmail } from "./support/http.js";

const herald = inject("herald");
const { stack } = herald;
const call = restClient(stack.gatewayUrl);
const dns = testDnsClient(herald.dns.controlUrl);
const sink = testSmtpSinkClient(herald.smtp.controlUrl);

/** A second campaigns process beside the stack's, on the same database: both run the scheduler. */
describe("two campaigns replicas", () => {
  let replica: ServiceProcess | undefined;
  let key: string;
  let domain: string;

  beforeAll(async () => {
    const started = await startService(
      "campaigns",
      { databaseUrl: stack.databaseUrl, redisUrl: herald.redisUrl, kafkaBrokers: herald.kafkaBrokers },
      undefined,
      { CONTACTS_URL: stack.serviceUrls.contacts, DELIVERY_URL: stack.serviceUrls.delivery, CAMPAIGN_POLL_INTERVAL_MS: "100" },
      90_000,
    );
    replica = started.process;
    key = (await createProject(call, (await signUp(call, "campaign-replicas")).cookie, "Replicas")).secretKey;
    domain = (await verifiedDomain(call, dns, key, "campaign-replicas")).domain;
  }, 180_000);

  afterAll(async () => {
    await replica?.stop();
  });

  it("fires each scheduled campaign once: one email per recipient, totalRecipients exact", async () => {
    const recipients = [uniqueEmail("replica-a"), uniqueEmail("replica-b"), uniqueEmail("replica-c")];
    for (const email of recipients) await call("POST", "/contacts", { key, body: { email } });
    const due = new Date(Date.now() + 2_000).toISOString();
    const ids: string[] = [];
    for (let index = 0; index < 4; index++) {
      const created = await call<{ data: CampaignJson }>("POST", "/campaigns", {
        key,
        body: { name: `Replica ${index}`, subject: `Replica ${index}`, body: "<p>Hi</p>", from: `news@${domain}`, audienceType: "ALL" },
      });
      ids.push(created.body.data.id);
      expect((await call("POST", `/campaigns/${created.body.data.id}/send`, { key, body: { scheduledFor: due } })).status).toBe(200);
    }
    for (const id of ids) {
      const done = await eventually(async () => {
        const campaign = (await call<CampaignJson>("GET", `/campaigns/${id}`, { key })).body;
        return campaign.status === "SENT" ? campaign : undefined;
      }, 60_000);
      expect(done.totalRecipients).toBe(recipients.length);
    }
    for (const email of recipients) {
      const messages = await sink.waitForMessages(ids.length, { to: email, timeoutMs: 30_000 });
      const subjects = messages.map((message) => /^Subject: (.*)$/im.exec(message.raw)?.[1]?.trim()).sort();
      expect(subjects).toEqual(ids.map((_, index) => `Replica ${index}`));
    }
  }, 180_000);
});
