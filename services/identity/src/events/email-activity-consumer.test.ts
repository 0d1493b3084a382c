import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { AnySchema } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { createEnvelope, createKafka, type EventEnvelope, encodeEnvelope, ensureTopics, topics } from "@herald/kafka";
import { createLogger } from "@herald/platform";
import { EmailActivitySchema, EmailCategory } from "@herald/proto/herald/events/v1/email_activity_pb";
import { startGroupAtEnd, waitUntil } from "@herald/testing";
import type { Kafka, Producer } from "kafkajs";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { dayOf } from "../domain/billing-period.js";
import { expectFailure, type IdentityHarness, signUp, startIdentity } from "../test-support/identity-harness.js";
import { createEmailActivityConsumer } from "./email-activity-consumer.js";

describe("the email-activity consumer", () => {
  let identity: IdentityHarness;
  let kafka: Kafka;
  let producer: Producer;
  let consumer: ReturnType<typeof createEmailActivityConsumer>;

  beforeAll(async () => {
    const herald = inject("herald");
    identity = await startIdentity(herald);
    kafka = createKafka({ clientId: "identity-activity-test", brokers: herald.kafkaBrokers });
    const admin = kafka.admin();
    await admin.connect();
    await ensureTopics(admin, [topics.emailActivity]);
    // A group of its own: the shared stack's identity consumes this topic too, for its own database. It starts
    // at the topic's end: what the test publishes, not what earlier tests of the run left there.
    const groupId = `identity.email-activity.test-${randomUUID()}`;
    await startGroupAtEnd(admin, groupId, topics.emailActivity);
    await admin.disconnect();
    producer = kafka.producer();
    await producer.connect();
    consumer = createEmailActivityConsumer({
      kafka,
      db: identity.db,
      logger: createLogger({ name: "activity-test", level: "silent" }),
      groupId,
      fromBeginning: true,
    });
    await consumer.start();
  }, 120_000);

  afterAll(async () => {
    await consumer?.stop();
    await producer?.disconnect();
    await identity?.stop();
  });

  // One contact, so one partition: a later event is handled after every earlier one.
  const contactId = randomUUID();
  const activity = (projectId: string, type: string, category = EmailCategory.TRANSACTIONAL, occurredAt = new Date()) =>
    createEnvelope({
      type,
      projectId,
      contactId,
      source: "delivery",
      occurredAt,
      payloadSchema: EmailActivitySchema,
      payload: create(EmailActivitySchema, { emailId: randomUUID(), category, recipient: "someone@example.com" }),
    });

  const unreadable = (envelope: EventEnvelope): EventEnvelope => ({
    ...envelope,
    payload: create(AnySchema, { typeUrl: envelope.payload?.typeUrl ?? "", value: new Uint8Array([0x0a, 0xff, 0xff, 0xff]) }),
  });

  const publish = (envelopes: EventEnvelope[]) =>
    producer.send({
      topic: topics.emailActivity,
      messages: envelopes.map((envelope) => ({ key: envelope.contactId, value: Buffer.from(encodeEnvelope(envelope)) })),
    });

  it("meters sends per category and month, once per event, and feeds setup and security state", async () => {
    const { user } = await signUp(identity);
    const { project } = await identity.projects.createProject({ userId: user.id, name: "Sender" });
    const projectId = project?.id ?? "";
    const request = { userId: user.id, projectId };
    const duplicate = activity(projectId, "email.sent");
    const now = new Date();
    const lastMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1) - 3_600_000);
    const lastMonthInWindow = lastMonth >= new Date(dayOf(now).getTime() - 29 * 86_400_000);
    const events = [
      duplicate,
      duplicate,
      activity(projectId, "email.sent"),
      activity(projectId, "email.sent", EmailCategory.CAMPAIGN),
      activity(projectId, "email.sent", EmailCategory.CAMPAIGN),
      activity(projectId, "email.sent", EmailCategory.WORKFLOW),
      activity(projectId, "email.received", EmailCategory.INBOUND),
      activity(projectId, "email.sent", EmailCategory.TRANSACTIONAL, lastMonth),
      activity(projectId, "email.bounce"),
      activity(projectId, "email.complaint"),
      activity(projectId, "email.open"),
      // Another project's mail, and mail of a project identity does not know, change nothing here.
      activity(randomUUID(), "email.sent"),
      // A payload that cannot be read is skipped; the events around it still count.
      unreadable(activity(projectId, "email.sent")),
    ];
    const sentinel = activity(projectId, "email.delivery");
    await publish([...events, sentinel]);
    await waitUntil(async () => (await identity.db.processedEvent.count({ where: { eventId: sentinel.eventId } })) === 1, {
      timeoutMs: 60_000,
    });

    const { consumption } = await identity.billing.getBillingConsumption(request);
    expect(consumption).toMatchObject({ transactional: 2n, campaigns: 2n, workflows: 1n, inbound: 1n });
    const setup = await identity.projects.getSetupState(request);
    expect(setup.emailSent).toBe(true);
    expect(Number(setup.firstEmailSentAt?.seconds)).toBe(Math.floor(lastMonth.getTime() / 1000));
    // Five sends this month, and last month's when it falls in the 30 days; one bounce, one complaint.
    const sent = lastMonthInWindow ? 6 : 5;
    const security = await identity.projects.getSecurityState(request);
    expect(security).toMatchObject({ sent: BigInt(sent), bounced: 1n, complained: 1n });
    expect(security.bounceRate).toBeCloseTo(1 / sent);
    expect(security.complaintRate).toBeCloseTo(1 / sent);

    // Delivered again in a later chunk (a redelivery after a rebalance), an event still counts once.
    const again = activity(projectId, "email.delivery");
    await publish([duplicate, events[3] as EventEnvelope, again]);
    await waitUntil(async () => (await identity.db.processedEvent.count({ where: { eventId: again.eventId } })) === 1, {
      timeoutMs: 60_000,
    });
    expect((await identity.billing.getBillingConsumption(request)).consumption).toMatchObject({ transactional: 2n, campaigns: 2n });

    // A reset clears the onboarding record of sending; metering and reputation stay.
    await identity.projects.resetProject(request);
    expect((await identity.projects.getSetupState(request)).emailSent).toBe(false);
    expect((await identity.billing.getBillingConsumption(request)).consumption?.transactional).toBe(2n);

    // Events that arrive after the project is deleted are skipped, not retried forever.
    await identity.projects.deleteProject(request);
    const late = activity(projectId, "email.sent");
    await publish([late]);
    await waitUntil(async () => (await identity.db.processedEvent.count({ where: { eventId: late.eventId } })) === 1, {
      timeoutMs: 60_000,
    });
    await expectFailure(identity.billing.getBillingConsumption(request), Code.NotFound, "PROJECT_NOT_FOUND");
  }, 120_000);
});
