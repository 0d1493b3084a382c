import { create } from "@bufbuild/protobuf";
import { createEnvelope, decodeEnvelope, encodeEnvelope, topics } from "@herald/kafka";
import { EmailActivitySchema, EmailCategory } from "@herald/proto/herald/events/v1/email_activity_pb";
import { collectMessages, createTestKafka, waitUntil } from "@herald/testing";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { type CreatedProject, consumerLagMs, createProject, restClient, type SignedInUser, signUp } from "./support/http.js";

const herald = inject("herald");
const call = restClient(herald.stack.gatewayUrl);

type Consumption = { consumption: Record<string, number>; limits: Record<string, number | null>; periodStart: string };

describe("billing limits, consumption and project reset", () => {
  let owner: SignedInUser;
  let project: CreatedProject;

  beforeAll(async () => {
    owner = await signUp(call, "payer");
    project = await createProject(call, owner.cookie, "Billed");
  });

  it("stores monthly caps per category", async () => {
    const path = `/users/@me/projects/${project.id}/billing-limits`;
    expect((await call("GET", path, { cookie: owner.cookie })).body).toEqual({
      transactional: null,
      campaigns: null,
      workflows: null,
      inbound: null,
    });
    const put = await call("PUT", path, { cookie: owner.cookie, body: { transactional: 5000, campaigns: 0 } });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ transactional: 5000, campaigns: 0, workflows: null, inbound: null });
    expect((await call("PUT", path, { cookie: owner.cookie, body: { transactional: -1 } })).status).toBe(422);
  });

  it("counts sent emails of the month from herald.email-activity.v1", async () => {
    const kafka = createTestKafka(herald.kafkaBrokers);
    const producer = kafka.producer();
    await producer.connect();
    const sent = (category: EmailCategory, type = "email.sent") =>
      createEnvelope({
        type,
        projectId: project.id,
        contactId: "contact-1",
        source: "delivery",
        payloadSchema: EmailActivitySchema,
        payload: create(EmailActivitySchema, { emailId: crypto.randomUUID(), category }),
      });
    const duplicate = sent(EmailCategory.TRANSACTIONAL);
    const events = [
      duplicate,
      duplicate,
      sent(EmailCategory.TRANSACTIONAL),
      sent(EmailCategory.CAMPAIGN),
      sent(EmailCategory.TRANSACTIONAL, "email.bounce"),
    ];
    await producer.send({
      topic: topics.emailActivity,
      messages: events.map((event) => ({ key: event.contactId, value: Buffer.from(encodeEnvelope(event)) })),
    });
    await producer.disconnect();

    const path = `/users/@me/projects/${project.id}/billing-consumption`;
    await waitUntil(async () => (await call<Consumption>("GET", path, { cookie: owner.cookie })).body.consumption.campaigns === 1, {
      timeoutMs: consumerLagMs,
    });
    const securityPath = `/projects/${project.id}/security`;
    await waitUntil(async () => (await call<{ bounced: number }>("GET", securityPath, { key: project.secretKey })).body.bounced === 1, {
      timeoutMs: consumerLagMs,
    });
    const answer = await call<Consumption>("GET", path, { cookie: owner.cookie });
    expect(answer.body.consumption).toEqual({ transactional: 2, campaigns: 1, workflows: 0, inbound: 0 });
    expect(answer.body.periodStart).toMatch(/^\d{4}-\d{2}-01T00:00:00\.000Z$/);

    const security = await call<{ sent: number; bounced: number; bounceRate: number }>("GET", securityPath, { key: project.secretKey });
    expect(security.body).toMatchObject({ sent: 3, bounced: 1 });
    expect(security.body.bounceRate).toBeCloseTo(1 / 3);
  }, 120_000);

  it("answers 400 BILLING_DISABLED for payments without Stripe", async () => {
    const checkout = await call<{ error: { code: string } }>("POST", `/users/@me/projects/${project.id}/checkout`, {
      cookie: owner.cookie,
      body: { priceId: "price_123" },
    });
    expect(checkout.status).toBe(400);
    expect(checkout.body.error.code).toBe("BILLING_DISABLED");
    expect((await call("GET", `/users/@me/projects/${project.id}/billing-invoices`, { cookie: owner.cookie })).status).toBe(400);
    expect((await call("GET", "/config")).body).toMatchObject({ billing: false });
  });

  it("announces a project reset on herald.project-lifecycle.v1", async () => {
    const kafka = createTestKafka(herald.kafkaBrokers);
    const lifecycle = await collectMessages(kafka, topics.projectLifecycle, (message) => message.key === project.id);
    try {
      expect((await call("POST", `/users/@me/projects/${project.id}/reset`, { cookie: owner.cookie })).status).toBe(200);
      await waitUntil(async () => lifecycle.messages.some((message) => decodeEnvelope(message.value).type === "project.reset"), {
        timeoutMs: 30_000,
      });
    } finally {
      await lifecycle.stop();
    }
  });
});
