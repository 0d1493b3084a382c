import { randomUUID } from "node:crypto";
import { createKafka } from "@herald/kafka";
import { createLogger } from "@herald/platform";
import { ContactSource } from "@herald/proto/herald/contacts/v1/resources_pb";
import { type LifecycleAnnouncer, startLifecycleAnnouncer } from "@herald/testing";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type ContactsHarness, eventually, newProjectId, randomEmail, startContacts } from "../test-support/contacts-harness.js";
import { createProjectLifecycleConsumer } from "./project-lifecycle-consumer.js";

describe("the project-lifecycle consumer", () => {
  let harness: ContactsHarness;
  let lifecycle: LifecycleAnnouncer;
  let consumer: ReturnType<typeof createProjectLifecycleConsumer>;

  beforeAll(async () => {
    const herald = inject("herald");
    harness = await startContacts(herald);
    const kafka = createKafka({ clientId: "contacts-lifecycle-test", brokers: herald.kafkaBrokers });
    lifecycle = await startLifecycleAnnouncer(herald.kafkaBrokers);
    // A group of its own: the shared stack's contacts service consumes this topic too, for its own database.
    consumer = createProjectLifecycleConsumer({
      kafka,
      db: harness.db,
      logger: createLogger({ name: "lifecycle-test", level: "silent" }),
      groupId: `contacts.project-lifecycle.test-${randomUUID()}`,
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
    for (let index = 0; index < 3; index++) {
      await harness.events.trackEvent({ projectId, email: randomEmail(), event: "signup", data: { plan: "pro" } });
    }
    await harness.jobs.startImport({
      projectId,
      filename: "a.csv",
      csv: new TextEncoder().encode("email,city\nimported@example.com,Lyon\n"),
    });
    await eventually(async () => (await harness.db.importJob.findFirst({ where: { projectId } }))?.status === "completed");
  }

  const countsOf = async (projectId: string) => ({
    contacts: await harness.db.contact.count({ where: { projectId } }),
    events: await harness.db.event.count({ where: { projectId } }),
    fields: await harness.db.contactField.count({ where: { projectId } }),
    imports: await harness.db.importJob.count({ where: { projectId } }),
  });

  it("wipes a reset project's data as of the reset, and a deleted project's entirely, leaving other projects alone", async () => {
    const [reset, deleted, bystander] = [newProjectId(), newProjectId(), newProjectId()];
    for (const projectId of [reset, deleted, bystander]) await populate(projectId);
    const before = await countsOf(bystander);
    expect(before).toEqual({ contacts: 4, events: 3, fields: 2, imports: 1 });

    const resetAt = new Date();
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Written after the reset happened: a reset keeps it.
    const kept = randomEmail("after-reset");
    await harness.contacts.upsertContact({ projectId: reset, email: kept, source: ContactSource.API });
    await announce("project.created", bystander);
    await announce("project.reset", reset, resetAt);
    await announce("project.deleted", deleted);

    await eventually(async () => (await harness.db.contact.count({ where: { projectId: deleted } })) === 0, 60_000);
    await eventually(async () => (await harness.db.contact.count({ where: { projectId: reset } })) === 1, 60_000);
    await eventually(async () => (await harness.db.projectWipe.count()) === 0, 30_000);
    expect(await countsOf(deleted)).toEqual({ contacts: 0, events: 0, fields: 0, imports: 0 });
    expect(await countsOf(reset)).toEqual({ contacts: 1, events: 0, fields: 0, imports: 0 });
    expect((await harness.db.contact.findFirstOrThrow({ where: { projectId: reset } })).email).toBe(kept);
    expect(await countsOf(bystander)).toEqual(before);

    // A field used again after the wipe is registered afresh.
    await harness.events.trackEvent({ projectId: reset, email: kept, event: "back", data: { plan: 1 } });
    expect(await harness.db.contactField.findMany({ where: { projectId: reset } })).toEqual([
      expect.objectContaining({ key: "plan", type: "number" }),
    ]);
  }, 120_000);
});
