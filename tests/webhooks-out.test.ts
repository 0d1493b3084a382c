import { randomUUID } from "node:crypto";
import { create, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { createEnvelope, createKafka, encodeEnvelope, partitionKeyOf, topics } from "@herald/kafka";
import { CampaignEventSchema } from "@herald/proto/herald/events/v1/campaign_event_pb";
import { ContactChangeSchema } from "@herald/proto/herald/events/v1/contact_change_pb";
import { ContactEventSchema } from "@herald/proto/herald/events/v1/contact_event_pb";
import { EmailActivitySchema, EmailCategory } from "@herald/proto/herald/events/v1/email_activity_pb";
import { WorkflowExecutionEventSchema } from "@herald/proto/herald/events/v1/workflow_execution_event_pb";
import { waitUntil } from "@herald/testing";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type CreatedProject, createProject, restClient, type SignedInUser, signUp, verifyAddress } from "./support/http.js";
import type { ErrorBody } from "./support/resources.js";
import { startWebhookReceiver } from "./support/webhook-receiver.js";

type Producer = ReturnType<ReturnType<typeof createKafka>["producer"]>;

const herald = inject("herald");
const { stack } = herald;
const call = restClient(stack.gatewayUrl);

type EndpointJson = {
  id: string;
  url: string;
  description: string;
  eventTypes: string[];
  enabled: boolean;
  disabledReason: string | null;
  secretPrefix: string;
  createdAt: string;
  updatedAt: string;
  failingSince: string | null;
  stats: { pending: number; delivered: number; failed: number };
  secret?: string;
};
type AttemptJson = { at: string; statusCode: number | null; durationMs: number; response: string; error: string | null };
type MessageJson = {
  id: string;
  eventType: string;
  eventId: string;
  status: string;
  attempts: AttemptJson[];
  nextAttemptAt: string | null;
  createdAt: string;
  deliveredAt: string | null;
  payload: { type: string; timestamp: string; data: Record<string, unknown> };
};
type Page<T> = { data: T[]; cursor: string; hasMore: boolean; total: number };
type Body = { type: string; timestamp: string; data: Record<string, unknown> };

/** A fact as its producer writes it: one envelope on its topic, keyed as producers key them. */
async function publish<Desc extends DescMessage>(
  producer: Producer,
  topic: string,
  fact: {
    type: string;
    projectId: string;
    contactId?: string;
    schema: Desc;
    payload: MessageShape<Desc>;
    occurredAt?: Date;
    eventId?: string;
  },
): Promise<string> {
  const envelope = createEnvelope({
    type: fact.type,
    projectId: fact.projectId,
    ...(fact.contactId ? { contactId: fact.contactId } : {}),
    source: "test",
    payloadSchema: fact.schema,
    payload: fact.payload,
    ...(fact.occurredAt ? { occurredAt: fact.occurredAt } : {}),
    ...(fact.eventId ? { eventId: fact.eventId } : {}),
  });
  await producer.send({ topic, messages: [{ key: partitionKeyOf(envelope), value: Buffer.from(encodeEnvelope(envelope)) }] });
  return envelope.eventId;
}

describe("outbound webhooks (issue 31)", () => {
  let owner: SignedInUser;
  let project: CreatedProject;
  let key: string;
  let other: CreatedProject;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let producer: Producer;

  const createEndpoint = async (body: Record<string, unknown>, as = key) => {
    const answer = await call<EndpointJson>("POST", "/settings/webhooks", { key: as, body });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    return answer.body;
  };
  const messagesOf = async (endpointId: string, query = "") =>
    (await call<Page<MessageJson>>("GET", `/settings/webhooks/${endpointId}/messages${query}`, { key })).body;
  const bodiesAt = (path: string): Body[] => receiver.received(path).map((request) => JSON.parse(request.body) as Body);

  beforeAll(async () => {
    owner = await signUp(call, "hooks-out");
    project = await createProject(call, owner.cookie, "Outbound hooks");
    key = project.secretKey;
    other = await createProject(call, (await signUp(call, "hooks-other")).cookie, "Other");
    receiver = await startWebhookReceiver();
    producer = createKafka({ clientId: `webhooks-out-${randomUUID()}`, brokers: herald.kafkaBrokers }).producer();
    await producer.connect();
  });

  afterAll(async () => {
    await producer?.disconnect();
    await receiver?.close();
  });

  it("creates, reads, lists, changes and deletes an endpoint; the secret is shown once", async () => {
    const created = await createEndpoint({ url: receiver.url("/crud"), description: "CRM sync", eventTypes: ["email.bounced"] });
    expect(created).toMatchObject({
      url: receiver.url("/crud"),
      description: "CRM sync",
      eventTypes: ["email.bounced"],
      enabled: true,
      disabledReason: null,
      failingSince: null,
      stats: { pending: 0, delivered: 0, failed: 0 },
    });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/=]{32}$/);
    expect(created.secretPrefix).toBe(created.secret?.slice(0, 10));

    const read = await call<EndpointJson>("GET", `/settings/webhooks/${created.id}`, { key });
    expect(read.status).toBe(200);
    expect(read.body).not.toHaveProperty("secret");
    expect(JSON.stringify(read.body)).not.toContain(created.secret);
    expect(read.body.secretPrefix).toBe(created.secretPrefix);

    const list = await call<Page<EndpointJson>>("GET", "/settings/webhooks", { key });
    expect(list.body.data.map((endpoint) => endpoint.id)).toContain(created.id);
    expect(JSON.stringify(list.body)).not.toContain(created.secret);

    const patched = await call<EndpointJson>("PATCH", `/settings/webhooks/${created.id}`, {
      key,
      body: { description: "CRM", eventTypes: [], enabled: false },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ description: "CRM", eventTypes: [], enabled: false, url: receiver.url("/crud") });

    expect((await call("DELETE", `/settings/webhooks/${created.id}`, { key })).status).toBe(204);
    const gone = await call<ErrorBody>("GET", `/settings/webhooks/${created.id}`, { key });
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe("WEBHOOK_ENDPOINT_NOT_FOUND");
  });

  it("pages the endpoint list with a cursor", async () => {
    const { cookie } = await signUp(call, "hooks-pages");
    const paged = await createProject(call, cookie, "Pages");
    for (let index = 0; index < 3; index++) await createEndpoint({ url: receiver.url(`/page-${index}`) }, paged.secretKey);
    const first = await call<Page<EndpointJson>>("GET", "/settings/webhooks?limit=2", { key: paged.secretKey });
    expect(first.body).toMatchObject({ hasMore: true, total: 3 });
    expect(first.body.data).toHaveLength(2);
    const second = await call<Page<EndpointJson>>("GET", `/settings/webhooks?limit=2&cursor=${first.body.cursor}`, {
      key: paged.secretKey,
    });
    expect(second.body).toMatchObject({ hasMore: false, cursor: "", total: 3 });
    expect(second.body.data.map((endpoint) => endpoint.url)).toEqual([receiver.url("/page-2")]);
  });

  it("refuses invalid endpoints with 422 VALIDATION_ERROR naming the field", async () => {
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ url: "not a url" }, "url", "invalid_url"],
      [{ url: "ftp://example.com/hook" }, "url", "invalid_scheme"],
      [{ url: "https://user:pass@example.com/hook" }, "url", "credentials_in_url"],
      [{ url: `https://example.com/${"a".repeat(2_100)}` }, "url", "too_long"],
      [{ url: "https://example.com/hook", description: "d".repeat(501) }, "description", "too_long"],
      [{ url: "https://example.com/hook", eventTypes: ["email.delivered", "email.teleported"] }, "eventTypes[1]", "unknown_event_type"],
    ];
    for (const [body, field, code] of cases) {
      const answer = await call<ErrorBody>("POST", "/settings/webhooks", { key, body });
      expect(answer.status, JSON.stringify(body).slice(0, 80)).toBe(422);
      expect(answer.body.error.code).toBe("VALIDATION_ERROR");
      expect(answer.body.error.errors?.[0]).toMatchObject({ field, code });
    }
    const created = await createEndpoint({ url: "https://example.com/ok" });
    const patched = await call<ErrorBody>("PATCH", `/settings/webhooks/${created.id}`, { key, body: { url: "gopher://x" } });
    expect(patched.status).toBe(422);
    await call("DELETE", `/settings/webhooks/${created.id}`, { key });
  });

  it("allows at most 20 endpoints per project (422)", async () => {
    const { cookie } = await signUp(call, "hooks-limit");
    const limited = await createProject(call, cookie, "Limit");
    for (let index = 0; index < 20; index++) await createEndpoint({ url: `https://example.com/${index}` }, limited.secretKey);
    const refused = await call<ErrorBody>("POST", "/settings/webhooks", {
      key: limited.secretKey,
      body: { url: "https://example.com/21" },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.error.errors?.[0]?.code).toBe("endpoint_limit");
  });

  it("refuses a public key with 401 INVALID_API_KEY, and answers 404 for unknown ids", async () => {
    const answer = await call<ErrorBody>("GET", "/settings/webhooks", { key: project.publicKey });
    expect(answer.status).toBe(401);
    expect(answer.body.error.code).toBe("INVALID_API_KEY");
    for (const path of [
      `/settings/webhooks/${randomUUID()}`,
      "/settings/webhooks/not-an-id",
      `/settings/webhooks/${randomUUID()}/messages`,
    ]) {
      const missing = await call<ErrorBody>("GET", path, { key });
      expect(missing.status, path).toBe(404);
      expect(missing.body.error.code).toBe("WEBHOOK_ENDPOINT_NOT_FOUND");
    }
    const endpoint = await createEndpoint({ url: receiver.url("/unknown-message") });
    const retried = await call<ErrorBody>("POST", `/settings/webhooks/${endpoint.id}/messages/msg_nothing/retry`, { key });
    expect(retried.status).toBe(404);
    expect(retried.body.error.code).toBe("WEBHOOK_MESSAGE_NOT_FOUND");
    const badStatus = await call<ErrorBody>("GET", `/settings/webhooks/${endpoint.id}/messages?status=lost`, { key });
    expect(badStatus.status).toBe(400);
    const badSince = await call<ErrorBody>("POST", `/settings/webhooks/${endpoint.id}/recover`, { key, body: { since: "yesterday" } });
    expect(badSince.status).toBe(422);
    const badType = await call<ErrorBody>("POST", `/settings/webhooks/${endpoint.id}/test`, { key, body: { eventType: "email.lost" } });
    expect(badType.status).toBe(422);
    await call("DELETE", `/settings/webhooks/${endpoint.id}`, { key });
  });

  it("lets members read endpoints without the secret, and only admins change them", async () => {
    const member = await signUp(call, "hooks-member");
    await Promise.all([verifyAddress(call, owner), verifyAddress(call, member)]);
    const added = await call("POST", `/projects/${project.id}/members`, {
      cookie: owner.cookie,
      body: { email: member.email, role: "MEMBER" },
    });
    expect(added.status).toBe(201);
    const endpoint = await createEndpoint({ url: receiver.url("/members") });
    const headers = { "x-project-id": project.id };
    const read = await call<EndpointJson>("GET", `/settings/webhooks/${endpoint.id}`, { cookie: member.cookie, headers });
    expect(read.status).toBe(200);
    expect(read.body).not.toHaveProperty("secret");
    const list = await call<Page<EndpointJson>>("GET", "/settings/webhooks", { cookie: member.cookie, headers });
    expect(JSON.stringify(list.body)).not.toContain(endpoint.secret);
    for (const [method, path, body] of [
      ["POST", "/settings/webhooks", { url: receiver.url("/x") }],
      ["PATCH", `/settings/webhooks/${endpoint.id}`, { enabled: false }],
      ["POST", `/settings/webhooks/${endpoint.id}/rotate-secret`, {}],
      ["DELETE", `/settings/webhooks/${endpoint.id}`, undefined],
    ] as const) {
      const refused = await call<ErrorBody>(method, path, { cookie: member.cookie, headers, ...(body ? { body } : {}) });
      expect(refused.status, `${method} ${path}`).toBe(403);
      expect(refused.body.error.code).toBe("INSUFFICIENT_ROLE");
    }
    const byOwner = await call<EndpointJson>("POST", "/settings/webhooks", {
      cookie: owner.cookie,
      headers,
      body: { url: receiver.url("/by-owner") },
    });
    expect(byOwner.status).toBe(201);
    expect(byOwner.body.secret).toMatch(/^whsec_/);
    await call("DELETE", `/settings/webhooks/${endpoint.id}`, { key });
    await call("DELETE", `/settings/webhooks/${byOwner.body.id}`, { key });
  });

  it("lists the event types with an example body each", async () => {
    const answer = await call<{ data: Array<{ type: string; description: string; example: Body }> }>(
      "GET",
      "/settings/webhooks/event-types",
      {
        key,
      },
    );
    expect(answer.status).toBe(200);
    const types = answer.body.data.map((entry) => entry.type);
    expect(types).toEqual(
      expect.arrayContaining([
        "email.sent",
        "email.delivered",
        "email.deferred",
        "email.bounced",
        "email.complained",
        "email.opened",
        "email.clicked",
        "email.unsubscribed",
        "email.failed",
        "email.received",
        "contact.created",
        "contact.updated",
        "contact.deleted",
        "contact.subscribed",
        "contact.unsubscribed",
        "segment.entered",
        "segment.exited",
        "campaign.sent",
        "campaign.paused",
        "workflow.execution.completed",
        "workflow.execution.failed",
      ]),
    );
    for (const entry of answer.body.data) {
      expect(entry.example.type).toBe(entry.type);
      expect(entry.example.data).toHaveProperty("projectId");
      expect(entry.description).not.toBe("");
    }
  });

  it("delivers every event type to an endpoint that takes all, and only its types to one that filters", async () => {
    const all = await createEndpoint({ url: receiver.url("/all") });
    const campaignsOnly = await createEndpoint({ url: receiver.url("/campaigns-only"), eventTypes: ["campaign.sent"] });
    const projectId = project.id;
    const contactId = randomUUID();
    const emailId = randomUUID();
    const campaignId = randomUUID();
    const workflowId = randomUUID();
    const executionId = randomUUID();
    const activity = (type: string, extra: { url?: string } = {}) =>
      publish(producer, topics.emailActivity, {
        type,
        projectId,
        contactId,
        schema: EmailActivitySchema,
        payload: create(EmailActivitySchema, {
          emailId,
          category: EmailCategory.CAMPAIGN,
          campaignId,
          recipient: "ada@example.com",
          ...extra,
        }),
      });
    const expected = new Map<string, Record<string, unknown>>();
    for (const [fact, type] of [
      ["email.sent", "email.sent"],
      ["email.delivery", "email.delivered"],
      ["email.deferred", "email.deferred"],
      ["email.bounce", "email.bounced"],
      ["email.complaint", "email.complained"],
      ["email.open", "email.opened"],
      ["email.click", "email.clicked"],
      ["email.unsubscribe", "email.unsubscribed"],
      ["email.failed", "email.failed"],
      ["email.received", "email.received"],
    ] as const) {
      await activity(fact, fact === "email.click" ? { url: "https://example.com/x" } : {});
      expected.set(type, { projectId, emailId, contactId, campaignId, recipient: "ada@example.com" });
    }
    // A tracked event on the contact-events topic is automation's, not a webhook event.
    await publish(producer, topics.contactEvents, {
      type: "signed.up",
      projectId,
      contactId,
      schema: ContactEventSchema,
      payload: create(ContactEventSchema, { eventId: randomUUID(), contactEmail: "ada@example.com" }),
    });
    for (const type of ["contact.subscribed", "contact.unsubscribed"]) {
      await publish(producer, topics.contactEvents, {
        type,
        projectId,
        contactId,
        schema: ContactEventSchema,
        payload: create(ContactEventSchema, { eventId: randomUUID(), contactEmail: "ada@example.com" }),
      });
      expected.set(type, { projectId, contactId, email: "ada@example.com" });
    }
    const segmentId = randomUUID();
    for (const [fact, type] of [
      ["segment.vip.entry", "segment.entered"],
      ["segment.vip.exit", "segment.exited"],
    ] as const) {
      await publish(producer, topics.contactEvents, {
        type: fact,
        projectId,
        contactId,
        schema: ContactEventSchema,
        payload: create(ContactEventSchema, {
          eventId: randomUUID(),
          contactEmail: "ada@example.com",
          data: { segmentId, segmentName: "VIP" },
        }),
      });
      expected.set(type, { projectId, contactId, segmentId, segmentName: "VIP", segmentSlug: "vip" });
    }
    for (const type of ["contact.created", "contact.updated", "contact.deleted"]) {
      await publish(producer, topics.contactChanges, {
        type,
        projectId,
        contactId,
        schema: ContactChangeSchema,
        payload: create(ContactChangeSchema, {
          email: "ada@example.com",
          subscribed: true,
          data: { plan: "pro" },
          changedFields: ["data.plan"],
        }),
      });
      expected.set(type, { projectId, contactId, email: "ada@example.com", subscribed: true, data: { plan: "pro" } });
    }
    for (const type of ["campaign.sent", "campaign.paused"]) {
      await publish(producer, topics.campaignEvents, {
        type,
        projectId,
        schema: CampaignEventSchema,
        payload: create(CampaignEventSchema, { campaignId, name: "June", subject: "Hi", recipients: 12n }),
      });
      expected.set(type, { projectId, campaignId, name: "June", recipients: 12 });
    }
    for (const type of ["workflow.execution.completed", "workflow.execution.failed"]) {
      await publish(producer, topics.workflowExecutions, {
        type,
        projectId,
        contactId,
        schema: WorkflowExecutionEventSchema,
        payload: create(WorkflowExecutionEventSchema, { executionId, workflowId, workflowName: "Onboarding", triggerEvent: "signed.up" }),
      });
      expected.set(type, { projectId, workflowId, executionId, contactId });
    }

    await waitUntil(async () => bodiesAt("/all").length >= expected.size && bodiesAt("/campaigns-only").length >= 1, {
      timeoutMs: 60_000,
      describe: () => `/all received ${bodiesAt("/all").map((body) => body.type)}`,
    });
    const bodies = bodiesAt("/all");
    expect(bodies.map((body) => body.type).sort()).toEqual([...expected.keys()].sort());
    for (const body of bodies) {
      expect(body.data, body.type).toMatchObject(expected.get(body.type) ?? {});
      expect(Number.isNaN(Date.parse(body.timestamp))).toBe(false);
    }
    // The filtered endpoint's last fact came after campaign.sent on the same partition, so everything it could get has come.
    await waitUntil(async () => (await messagesOf(all.id)).total >= expected.size, { timeoutMs: 30_000 });
    expect(bodiesAt("/campaigns-only").map((body) => body.type)).toEqual(["campaign.sent"]);
    expect((await messagesOf(campaignsOnly.id)).total).toBe(1);
  });

  it("delivers a contact's subscription from contacts itself (the real producer)", async () => {
    const endpoint = await createEndpoint({ url: receiver.url("/subscriptions"), eventTypes: ["contact.subscribed"] });
    const email = `sub-${randomUUID().slice(0, 8)}@example.com`;
    const tracked = await call<{ data: { contact: string } }>("POST", "/v1/track", {
      key: project.publicKey,
      body: { email, event: "signed.up", subscribed: false },
    });
    expect(tracked.status).toBe(200);
    const contactId = tracked.body.data.contact;
    expect((await call("PATCH", `/contacts/${contactId}`, { key, body: { subscribed: true } })).status).toBe(200);
    await waitUntil(async () => bodiesAt("/subscriptions").length > 0, { timeoutMs: 60_000 });
    expect(bodiesAt("/subscriptions")[0]).toMatchObject({ type: "contact.subscribed", data: { projectId: project.id, contactId, email } });
    await call("DELETE", `/settings/webhooks/${endpoint.id}`, { key });
  });

  it("signs to the Standard Webhooks specification: it verifies, a tampered body or an old timestamp does not", async () => {
    const endpoint = await createEndpoint({ url: receiver.url("/signed") });
    const sent = await call<MessageJson>("POST", `/settings/webhooks/${endpoint.id}/test`, { key, body: { eventType: "email.delivered" } });
    expect(sent.status).toBe(202);
    expect(sent.body).toMatchObject({ eventType: "email.delivered", payload: { type: "email.delivered" } });
    await waitUntil(async () => receiver.received("/signed").length > 0, { timeoutMs: 30_000 });
    const [request] = receiver.received("/signed");
    if (!request) throw new Error("nothing received");
    const headers = {
      "webhook-id": String(request.headers["webhook-id"]),
      "webhook-timestamp": String(request.headers["webhook-timestamp"]),
      "webhook-signature": String(request.headers["webhook-signature"]),
    };
    expect(headers["webhook-id"]).toBe(sent.body.id);
    expect(headers["webhook-id"]).toMatch(/^msg_/);
    const webhook = new Webhook(endpoint.secret ?? "");
    expect(webhook.verify(request.body, headers)).toMatchObject({ type: "email.delivered", data: { projectId: project.id } });
    expect(() => webhook.verify(request.body.replace("email.delivered", "email.bounced"), headers)).toThrow();
    const old = String(Math.floor(Date.now() / 1000) - 3_600);
    expect(() => webhook.verify(request.body, { ...headers, "webhook-timestamp": old })).toThrow(/too old/i);
    expect(() => new Webhook(`whsec_${Buffer.from("another secret").toString("base64")}`).verify(request.body, headers)).toThrow();
  });

  it("signs with both secrets during a rotation's grace", async () => {
    const endpoint = await createEndpoint({ url: receiver.url("/rotated") });
    const rotated = await call<{ secret: string; previousSecretExpiresAt: string }>(
      "POST",
      `/settings/webhooks/${endpoint.id}/rotate-secret`,
      {
        key,
      },
    );
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(endpoint.secret);
    expect(Date.parse(rotated.body.previousSecretExpiresAt) - Date.now()).toBeGreaterThan(23 * 3_600_000);
    expect((await call<EndpointJson>("GET", `/settings/webhooks/${endpoint.id}`, { key })).body.secretPrefix).toBe(
      rotated.body.secret.slice(0, 10),
    );
    await call("POST", `/settings/webhooks/${endpoint.id}/test`, { key, body: { eventType: "contact.created" } });
    await waitUntil(async () => receiver.received("/rotated").length > 0, { timeoutMs: 30_000 });
    const [request] = receiver.received("/rotated");
    if (!request) throw new Error("nothing received");
    const headers = {
      "webhook-id": String(request.headers["webhook-id"]),
      "webhook-timestamp": String(request.headers["webhook-timestamp"]),
      "webhook-signature": String(request.headers["webhook-signature"]),
    };
    expect(headers["webhook-signature"].split(" ")).toHaveLength(2);
    expect(new Webhook(rotated.body.secret).verify(request.body, headers)).toMatchObject({ type: "contact.created" });
    expect(new Webhook(endpoint.secret ?? "").verify(request.body, headers)).toMatchObject({ type: "contact.created" });
  });

  it("sends nothing to a disabled endpoint, and re-enabling it replays nothing", async () => {
    const disabled = await createEndpoint({ url: receiver.url("/disabled"), eventTypes: ["campaign.sent"], enabled: false });
    await createEndpoint({ url: receiver.url("/witness"), eventTypes: ["campaign.sent"] });
    const campaignId = randomUUID();
    const fact = () =>
      publish(producer, topics.campaignEvents, {
        type: "campaign.sent",
        projectId: project.id,
        schema: CampaignEventSchema,
        payload: create(CampaignEventSchema, { campaignId, name: "Gap", subject: "Gap", recipients: 1n }),
      });
    await fact();
    // Facts of one project are keyed by its id: the witness's message means the disabled endpoint's would exist by now.
    await waitUntil(async () => receiver.received("/witness").length >= 1, { timeoutMs: 60_000 });
    expect((await messagesOf(disabled.id)).total).toBe(0);
    const enabled = await call<EndpointJson>("PATCH", `/settings/webhooks/${disabled.id}`, { key, body: { enabled: true } });
    expect(enabled.body).toMatchObject({ enabled: true, disabledReason: null });
    await fact();
    await waitUntil(async () => receiver.received("/disabled").length >= 1 && receiver.received("/witness").length >= 2, {
      timeoutMs: 60_000,
    });
    // Only the fact after re-enabling: the one before was never queued for it.
    expect((await messagesOf(disabled.id)).total).toBe(1);
    expect(receiver.received("/disabled")).toHaveLength(1);
  });

  it("refuses a private address at delivery time, and the attempt says why", async () => {
    // 127.0.0.1 is loopback and not among WEBHOOK_ALLOWED_ADDRESSES (only the receiver's 127.0.0.2 is).
    const endpoint = await createEndpoint({ url: `http://127.0.0.1:${new URL(stack.gatewayUrl).port}/health` });
    const sent = await call<MessageJson>("POST", `/settings/webhooks/${endpoint.id}/test`, { key, body: { eventType: "email.sent" } });
    await waitUntil(async () => (await messagesOf(endpoint.id)).data.find((message) => message.id === sent.body.id)?.status === "failed", {
      timeoutMs: 60_000,
    });
    const message = (await messagesOf(endpoint.id, "?status=failed")).data.find((candidate) => candidate.id === sent.body.id);
    // The stack's schedule has three entries (0s,1s,2s): three attempts, each refused before any connection.
    expect(message?.attempts).toHaveLength(3);
    for (const attempt of message?.attempts ?? []) {
      expect(attempt).toMatchObject({ statusCode: null, error: expect.stringMatching(/^refused: private address/) });
    }
    expect(message?.nextAttemptAt).toBeNull();
    const stats = (await call<EndpointJson>("GET", `/settings/webhooks/${endpoint.id}`, { key })).body;
    expect(stats.stats.failed).toBe(1);
    expect(stats.failingSince).not.toBeNull();
  });

  it("retries one message on request and recovers failed ones since a time", async () => {
    const endpoint = await createEndpoint({ url: receiver.url("/recover") });
    receiver.script("/recover", [500, 500, 500]);
    const since = new Date(Date.now() - 1_000).toISOString();
    const sent = await call<MessageJson>("POST", `/settings/webhooks/${endpoint.id}/test`, { key, body: { eventType: "email.opened" } });
    await waitUntil(async () => (await messagesOf(endpoint.id, "?status=failed")).total === 1, { timeoutMs: 60_000 });
    const retried = await call<MessageJson>("POST", `/settings/webhooks/${endpoint.id}/messages/${sent.body.id}/retry`, { key });
    expect(retried.status).toBe(202);
    expect(retried.body).toMatchObject({ id: sent.body.id, status: "pending" });
    await waitUntil(async () => (await messagesOf(endpoint.id, "?status=delivered")).total === 1, { timeoutMs: 30_000 });
    const delivered = (await messagesOf(endpoint.id)).data[0];
    expect(delivered?.attempts.map((attempt) => attempt.statusCode)).toEqual([500, 500, 500, 200]);
    expect(delivered?.deliveredAt).not.toBeNull();
    expect(new Set(receiver.received("/recover").map((request) => request.headers["webhook-id"]))).toEqual(new Set([sent.body.id]));

    receiver.script("/recover", [500, 500, 500]);
    const second = await call<MessageJson>("POST", `/settings/webhooks/${endpoint.id}/test`, { key, body: { eventType: "email.clicked" } });
    await waitUntil(async () => (await messagesOf(endpoint.id, "?status=failed")).total === 1, { timeoutMs: 60_000 });
    const recovered = await call<{ queued: number }>("POST", `/settings/webhooks/${endpoint.id}/recover`, { key, body: { since } });
    expect(recovered.status).toBe(202);
    expect(recovered.body).toEqual({ queued: 1 });
    await waitUntil(async () => (await messagesOf(endpoint.id, "?status=delivered")).total === 2, { timeoutMs: 30_000 });
    expect((await messagesOf(endpoint.id)).data.map((message) => message.id)).toEqual([second.body.id, sent.body.id]);
  });

  it("shows another project's key none of this project's endpoints or messages", async () => {
    const endpoint = await createEndpoint({ url: receiver.url("/tenancy") });
    const sent = await call<MessageJson>("POST", `/settings/webhooks/${endpoint.id}/test`, { key, body: { eventType: "email.sent" } });
    const theirs = other.secretKey;
    const list = await call<Page<EndpointJson>>("GET", "/settings/webhooks", { key: theirs });
    expect(list.status).toBe(200);
    expect(list.body.data.map((candidate) => candidate.id)).not.toContain(endpoint.id);
    for (const [method, path, body] of [
      ["GET", `/settings/webhooks/${endpoint.id}`, undefined],
      ["PATCH", `/settings/webhooks/${endpoint.id}`, { enabled: false }],
      ["DELETE", `/settings/webhooks/${endpoint.id}`, undefined],
      ["POST", `/settings/webhooks/${endpoint.id}/rotate-secret`, undefined],
      ["GET", `/settings/webhooks/${endpoint.id}/messages`, undefined],
      ["POST", `/settings/webhooks/${endpoint.id}/messages/${sent.body.id}/retry`, undefined],
      ["POST", `/settings/webhooks/${endpoint.id}/recover`, { since: new Date(0).toISOString() }],
      ["POST", `/settings/webhooks/${endpoint.id}/test`, { eventType: "email.sent" }],
    ] as const) {
      const answer = await call<ErrorBody>(method, path, { key: theirs, ...(body ? { body } : {}) });
      expect(answer.status, `${method} ${path}`).toBe(404);
      expect(answer.body.error.code).toBe("WEBHOOK_ENDPOINT_NOT_FOUND");
    }
    expect((await call<EndpointJson>("GET", `/settings/webhooks/${endpoint.id}`, { key })).body.enabled).toBe(true);
  });

  it("forgets a reset project's endpoints and their messages", async () => {
    const resetOwner = await signUp(call, "hooks-reset");
    const reset = await createProject(call, resetOwner.cookie, "Reset hooks");
    const endpoint = await createEndpoint({ url: receiver.url("/reset") }, reset.secretKey);
    await call("POST", `/settings/webhooks/${endpoint.id}/test`, { key: reset.secretKey, body: { eventType: "email.sent" } });
    await waitUntil(async () => receiver.received("/reset").length > 0, { timeoutMs: 30_000 });
    expect((await call("POST", `/users/@me/projects/${reset.id}/reset`, { cookie: resetOwner.cookie })).status).toBe(200);
    await waitUntil(async () => (await call<Page<EndpointJson>>("GET", "/settings/webhooks", { key: reset.secretKey })).body.total === 0, {
      timeoutMs: 60_000,
    });
    expect((await call("GET", `/settings/webhooks/${endpoint.id}/messages`, { key: reset.secretKey })).status).toBe(404);
  });

  it("queues a fact Kafka delivers twice once, with the fact's time as the body's timestamp", async () => {
    const endpoint = await createEndpoint({ url: receiver.url("/twice"), eventTypes: ["campaign.paused"] });
    const eventId = randomUUID();
    const occurredAt = new Date("2026-06-01T08:30:00.000Z");
    const fact = {
      type: "campaign.paused",
      projectId: project.id,
      schema: CampaignEventSchema,
      payload: create(CampaignEventSchema, {
        campaignId: randomUUID(),
        name: "Twice",
        subject: "Twice",
        recipients: 3n,
        reason: "suspended",
      }),
      occurredAt,
      eventId,
    };
    await publish(producer, topics.campaignEvents, fact);
    await publish(producer, topics.campaignEvents, fact);
    await publish(producer, topics.campaignEvents, { ...fact, eventId: randomUUID() });
    await waitUntil(async () => receiver.received("/twice").length >= 2, { timeoutMs: 60_000 });
    const messages = (await messagesOf(endpoint.id)).data;
    expect(messages).toHaveLength(2);
    expect(messages.filter((message) => message.eventId === eventId)).toHaveLength(1);
    expect(bodiesAt("/twice")[0]).toMatchObject({
      type: "campaign.paused",
      timestamp: occurredAt.toISOString(),
      data: { reason: "suspended" },
    });
  });
});
