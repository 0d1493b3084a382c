import { randomUUID } from "node:crypto";
import { createKafka } from "@herald/kafka";
import { createLogger } from "@herald/platform";
import { EmailStatus } from "@herald/proto/herald/delivery/v1/emails_service_pb";
import { type LifecycleAnnouncer, startLifecycleAnnouncer } from "@herald/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type DeliveryHarness, eventually, newProjectId, randomRecipient, startDelivery } from "../test-support/delivery-harness.js";
import { createProjectLifecycleConsumer } from "./project-lifecycle-consumer.js";

describe("delivery's project-lifecycle consumer", () => {
  let harness: DeliveryHarness;
  let lifecycle: LifecycleAnnouncer;
  let consumer: ReturnType<typeof createProjectLifecycleConsumer>;

  beforeAll(async () => {
    const herald = inject("herald");
    harness = await startDelivery(herald);
    const kafka = createKafka({ clientId: "delivery-lifecycle-test", brokers: herald.kafkaBrokers });
    lifecycle = await startLifecycleAnnouncer(herald.kafkaBrokers);
    // A group of its own: the shared stack's delivery service consumes this topic too, for its own database.
    consumer = createProjectLifecycleConsumer({
      kafka,
      db: harness.db,
      logger: createLogger({ name: "lifecycle-test", level: "silent" }),
      groupId: `delivery.project-lifecycle.test-${randomUUID()}`,
      fromBeginning: true,
    });
    await consumer.start();
  }, 120_000);

  afterAll(async () => {
    await consumer?.stop();
    await lifecycle?.stop();
    await harness?.stop();
  });

  const announce = (type: string, projectId: string, occurredAt?: Date) => lifecycle.announce(type, projectId, occurredAt);

  async function populate(projectId: string) {
    const domain = await harness.addDomain(projectId);
    const bounced = randomRecipient("gone");
    await harness.emails.enqueueEmail({
      projectId,
      to: { email: randomRecipient() },
      from: { email: `a@${domain.domain}` },
      subject: "s",
      html: "x",
    });
    await harness.db.suppression.create({ data: { projectId, email: bounced, reason: "bounce" } });
  }

  const countsOf = async (projectId: string) => ({
    domains: await harness.db.domain.count({ where: { projectId } }),
    emails: await harness.db.email.count({ where: { projectId } }),
    suppressions: await harness.db.suppression.count({ where: { projectId } }),
  });

  it("forgets a deleted project's domains, queued emails and suppressions, and nothing of another project", async () => {
    const deleted = newProjectId();
    const kept = newProjectId();
    await populate(deleted);
    await populate(kept);
    await announce("project.deleted", deleted);
    await eventually(async () => (await countsOf(deleted)).emails === 0);
    expect(await countsOf(deleted)).toEqual({ domains: 0, emails: 0, suppressions: 0 });
    expect(await countsOf(kept)).toEqual({ domains: 1, emails: 1, suppressions: 1 });
    const [email] = await harness.db.email.findMany({ where: { projectId: kept } });
    expect((await harness.emails.getEmail({ projectId: kept, id: email?.id ?? "" })).email?.status).toBe(EmailStatus.PENDING);
  });
});
