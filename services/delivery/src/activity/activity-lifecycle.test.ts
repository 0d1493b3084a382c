import { randomUUID } from "node:crypto";
import { createKafka } from "@herald/kafka";
import { createLogger } from "@herald/platform";
import { type LifecycleAnnouncer, startLifecycleAnnouncer } from "@herald/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { writeEmailActivity } from "../events/email-activity-outbox.js";
import { createProjectLifecycleConsumer } from "../events/project-lifecycle-consumer.js";
import { type DeliveryHarness, eventually, newProjectId, randomRecipient, startDelivery } from "../test-support/delivery-harness.js";

describe("a project's activity when the project is reset or deleted", () => {
  let harness: DeliveryHarness;
  let lifecycle: LifecycleAnnouncer;
  let consumer: ReturnType<typeof createProjectLifecycleConsumer>;

  beforeAll(async () => {
    const herald = inject("herald");
    harness = await startDelivery(herald);
    lifecycle = await startLifecycleAnnouncer(herald.kafkaBrokers);
    // A group of its own: the shared stack's delivery service consumes this topic too, for its own database.
    consumer = createProjectLifecycleConsumer({
      kafka: createKafka({ clientId: "delivery-activity-lifecycle-test", brokers: herald.kafkaBrokers }),
      db: harness.db,
      logger: createLogger({ name: "activity-lifecycle-test", level: "silent" }),
      groupId: `delivery.project-lifecycle.activity-test-${randomUUID()}`,
      fromBeginning: true,
    });
    await consumer.start();
  }, 120_000);

  afterAll(async () => {
    await consumer?.stop();
    await lifecycle?.stop();
    await harness?.stop();
  });

  async function populate(projectId: string) {
    await harness.addDomain(projectId);
    const email = {
      id: randomUUID(),
      projectId,
      contactId: null,
      toEmail: randomRecipient(),
      category: "TRANSACTIONAL",
      campaignId: null,
      workflowId: null,
      messageId: `<${randomUUID()}@test>`,
      attempts: 1,
    };
    await harness.db.$transaction(async (tx) => {
      await writeEmailActivity(tx, "email.sent", email);
      await writeEmailActivity(tx, "email.open", email);
    });
  }

  const activityOf = (projectId: string) => harness.db.emailActivity.count({ where: { projectId } });
  const domainsOf = (projectId: string) => harness.db.domain.count({ where: { projectId } });

  it("wipes it on project.reset (keeping the domains) and on project.deleted, and nothing of another project", async () => {
    const reset = newProjectId();
    const deleted = newProjectId();
    const kept = newProjectId();
    for (const projectId of [reset, deleted, kept]) await populate(projectId);
    expect(await activityOf(reset)).toBe(2);

    await lifecycle.announce("project.reset", reset);
    await lifecycle.announce("project.deleted", deleted);
    // Joining a new consumer group is slow on a busy broker: allow it more than the default.
    await eventually(async () => (await activityOf(reset)) === 0 && (await activityOf(deleted)) === 0, 80_000);
    expect(await domainsOf(reset)).toBe(1);
    expect(await domainsOf(deleted)).toBe(0);
    expect(await activityOf(kept)).toBe(2);
  }, 90_000);
});
