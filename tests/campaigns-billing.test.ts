import { testDnsClient, testSmtpSinkClient, waitUntil } from "@herald/testing";
import { beforeAll, describe, expect, inject, it } from "vitest";
import type { CampaignJson } from "./campaigns.test.js";
import { verifiedDomain } from "./support/domains.js";
import { type CreatedProject, createProject, restClient, type SignedInUser, signUp, uniqueEmail } from "./support/http.js";

const { stack, dns: dnsServer, smtp } = inject("herald");
const call = restClient(stack.gatewayUrl);
const dns = testDnsClient(dnsServer.controlUrl);
const sink = testSmtpSinkClient(smtp.controlUrl);

/**
 * A campaign whose emails delivery refuses because the project reached its monthly CAMPAIGN cap
 * stops: CANCELLED, with the cap as its stopReason (docs/api-decisions.md "A stopped campaign shows its stopReason").
 */
describe("campaigns at the billing cap", () => {
  let owner: SignedInUser;
  let project: CreatedProject;
  let domain: string;
  const recipients = [uniqueEmail("cap-a"), uniqueEmail("cap-b"), uniqueEmail("cap-c")];

  beforeAll(async () => {
    owner = await signUp(call, "campaign-cap");
    project = await createProject(call, owner.cookie, "Campaign cap");
    domain = (await verifiedDomain(call, dns, project.secretKey, "campaign-cap")).domain;
    for (const email of recipients) {
      expect((await call("POST", "/contacts", { key: project.secretKey, body: { email } })).status).toBeLessThan(300);
    }
  });

  it("moves the campaign to CANCELLED with the cap as stopReason, and sends none of its emails", async () => {
    const limits = await call("PUT", `/users/@me/projects/${project.id}/billing-limits`, {
      cookie: owner.cookie,
      body: { transactional: null, campaigns: 0, workflows: null, inbound: null },
    });
    expect(limits.status).toBe(200);

    // The cap reaches delivery through Kafka: a campaign sent before it has may still go out. Send one at a
    // time until one is stopped; that one shows what a stopped campaign looks like.
    let stopped: CampaignJson | undefined;
    const deadline = Date.now() + 90_000;
    for (let round = 0; !stopped && Date.now() < deadline; round++) {
      const created = await call<{ data: CampaignJson }>("POST", "/campaigns", {
        key: project.secretKey,
        body: { name: `Capped ${round}`, subject: `Capped ${round}`, body: "<p>Hello</p>", from: `news@${domain}`, audienceType: "ALL" },
      });
      expect(created.status).toBe(201);
      const id = created.body.data.id;
      expect((await call("POST", `/campaigns/${id}/send`, { key: project.secretKey, body: {} })).status).toBe(200);
      let campaign: CampaignJson | undefined;
      await waitUntil(
        async () => {
          campaign = (await call<CampaignJson>("GET", `/campaigns/${id}`, { key: project.secretKey })).body;
          return ["SENT", "CANCELLED"].includes(campaign.status);
        },
        { timeoutMs: 60_000 },
      );
      if (campaign?.status === "CANCELLED") stopped = campaign;
    }
    if (!stopped) throw new Error("no campaign was stopped within 90 s of the cap");
    expect(stopped.stopReason).toMatch(/billing cap.*monthly campaigns cap of 0 emails is reached/);
    const subject = stopped.subject;
    for (const to of recipients) {
      const received = await sink.messages(to);
      expect(received.filter((message) => message.raw.includes(`Subject: ${subject}\r`))).toHaveLength(0);
    }
  });
});
