import { randomUUID } from "node:crypto";
import { testDnsClient, waitUntil } from "@herald/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { CampaignJson } from "./campaigns.test.js";
import { verifiedDomain } from "./support/domains.js";
import { type CreatedProject, createProject, restClient, signUp, uniqueEmail } from "./support/http.js";
import { startWebhookReceiver } from "./support/webhook-receiver.js";
import { finished, workflowBuilder } from "./support/workflows.js";

const { stack, dns: dnsServer } = inject("herald");
const call = restClient(stack.gatewayUrl);
const dns = testDnsClient(dnsServer.controlUrl);

type Body = { type: string; timestamp: string; data: Record<string, unknown> };

/**
 * Outbound webhooks end to end through the services that own the facts: what a user does through the REST API reaches
 * an endpoint as its webhook event, with no test writing to Kafka (tests/webhooks-out.test.ts publishes each fact itself).
 */
describe("outbound webhooks from the real producers", () => {
  let project: CreatedProject;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  const path = `/producers-${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    project = await createProject(call, (await signUp(call, "webhooks-producers")).cookie, "Webhook producers");
    receiver = await startWebhookReceiver();
    const endpoint = await call("POST", "/settings/webhooks", { key: project.secretKey, body: { url: receiver.url(path) } });
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
  });

  afterAll(async () => {
    await receiver?.close();
  });

  const bodies = (): Body[] => receiver.received(path).map((request) => JSON.parse(request.body) as Body);
  /** The first event of this type whose data matches, once it arrived. */
  async function arrived(type: string, matches: (data: Record<string, unknown>) => boolean): Promise<Body> {
    let found: Body | undefined;
    await waitUntil(
      async () => {
        found = bodies().find((body) => body.type === type && matches(body.data));
        return found !== undefined;
      },
      {
        timeoutMs: 90_000,
        describe: () =>
          `no ${type} among ${bodies()
            .map((body) => body.type)
            .join(", ")}`,
      },
    );
    return found as Body;
  }

  it("a contact's creation, change and deletion through /contacts are contact.created, contact.updated and contact.deleted", async () => {
    const email = uniqueEmail("lifecycle");
    const created = await call<{ id: string }>("POST", "/contacts", { key: project.secretKey, body: { email, data: { plan: "free" } } });
    expect(created.status).toBe(201);
    const contactId = created.body.id;
    expect((await call("PATCH", `/contacts/${contactId}`, { key: project.secretKey, body: { data: { plan: "pro" } } })).status).toBe(200);
    expect((await call("DELETE", `/contacts/${contactId}`, { key: project.secretKey })).status).toBeLessThan(300);

    const byContact = (data: Record<string, unknown>) => data.contactId === contactId;
    expect((await arrived("contact.created", byContact)).data).toMatchObject({ projectId: project.id, email, data: { plan: "free" } });
    expect((await arrived("contact.updated", byContact)).data).toMatchObject({ changedFields: ["plan"], data: { plan: "pro" } });
    expect((await arrived("contact.deleted", byContact)).data).toMatchObject({ email });
  }, 120_000);

  it("a campaign's send is campaign.sent and an email.sent for each recipient", async () => {
    const { domain } = await verifiedDomain(call, dns, project.secretKey, "webhooks-producers");
    const recipient = uniqueEmail("reader");
    expect((await call("POST", "/contacts", { key: project.secretKey, body: { email: recipient, subscribed: true } })).status).toBe(201);
    const campaign = await call<{ data: CampaignJson }>("POST", "/campaigns", {
      key: project.secretKey,
      body: { name: "Webhook news", subject: "News", body: "<p>Hi</p>", from: `news@${domain}`, audienceType: "ALL" },
    });
    expect(campaign.status).toBe(201);
    const campaignId = campaign.body.data.id;
    expect((await call("POST", `/campaigns/${campaignId}/send`, { key: project.secretKey, body: {} })).status).toBe(200);

    expect((await arrived("campaign.sent", (data) => data.campaignId === campaignId)).data).toMatchObject({
      name: "Webhook news",
      recipients: 1,
    });
    expect((await arrived("email.sent", (data) => data.campaignId === campaignId)).data).toMatchObject({
      recipient,
      category: "campaign",
    });
  }, 120_000);

  it("a workflow execution that runs to its end is workflow.execution.completed", async () => {
    const flows = workflowBuilder(call, project.secretKey);
    const event = `webhooked_${randomUUID().slice(0, 8)}`;
    const workflow = await flows.create({
      eventName: event,
      steps: [{ ref: "mark", type: "UPDATE_CONTACT", config: { data: { done: true } } }],
    });
    const tracked = await call<{ data: { contact: string } }>("POST", "/v1/track", {
      key: project.publicKey,
      body: { email: uniqueEmail("flow"), event },
    });
    expect(tracked.status).toBe(200);
    const contactId = tracked.body.data.contact;
    await flows.executionsWhen(workflow.id, (executions) =>
      executions.some((execution) => execution.contactId === contactId && finished(execution)),
    );

    expect((await arrived("workflow.execution.completed", (data) => data.contactId === contactId)).data).toMatchObject({
      workflowId: workflow.id,
      triggerEvent: event,
    });
  }, 120_000);
});
