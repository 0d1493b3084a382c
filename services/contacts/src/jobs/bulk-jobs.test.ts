import { randomUUID } from "node:crypto";
import { Code } from "@connectrpc/connect";
import { errorDetailOf } from "@herald/errors";
import { BulkAction, type BulkJob, ContactSource } from "@herald/proto/herald/contacts/v1/resources_pb";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  type ContactsHarness,
  eventually,
  expectFailure,
  newProjectId,
  outboxOf,
  randomEmail,
  startContacts,
} from "../test-support/contacts-harness.js";

describe("bulk jobs", () => {
  let harness: ContactsHarness;

  beforeAll(async () => {
    harness = await startContacts(inject("herald"));
  });

  afterAll(() => harness?.stop());

  async function runBulk(projectId: string, action: BulkAction, contactIds: string[]): Promise<BulkJob> {
    const { job } = await harness.jobs.startBulkJob({ projectId, action, contactIds });
    expect(job).toMatchObject({ status: "queued", action, total: BigInt(new Set(contactIds).size) });
    return eventually(async () => {
      const current = (await harness.jobs.getBulkJob({ projectId, jobId: job?.jobId ?? "" })).job;
      return current?.status === "completed" ? current : undefined;
    });
  }

  async function contactsIn(projectId: string, count: number, subscribed: boolean): Promise<string[]> {
    const ids: string[] = [];
    for (let index = 0; index < count; index++) {
      const { contact } = await harness.contacts.upsertContact({ projectId, email: randomEmail(), subscribed, source: ContactSource.API });
      ids.push(contact?.id ?? "");
    }
    return ids;
  }

  it("unsubscribes and subscribes, counting changes, contacts already so and unknown ids, with an event per change", async () => {
    const projectId = newProjectId();
    const subscribed = await contactsIn(projectId, 250, true);
    const unsubscribed = await contactsIn(projectId, 3, false);
    const foreign = await contactsIn(newProjectId(), 1, true);
    const ids = [...subscribed, ...unsubscribed, randomUUID(), "not-a-uuid", ...foreign, subscribed[0] ?? ""];

    const job = await runBulk(projectId, BulkAction.UNSUBSCRIBE, ids);
    expect(job).toMatchObject({ total: 256n, processed: 256n, succeeded: 250n, unchanged: 3n, notFound: 3n });
    expect(job.finishedAt).toBeDefined();
    expect(await harness.db.contact.count({ where: { projectId, subscribed: true } })).toBe(0);
    const events = await outboxOf(harness.db, projectId);
    expect(events).toHaveLength(250);
    expect(events.every((event) => event.envelope.type === "contact.unsubscribed")).toBe(true);
    expect(new Set(events.map((event) => event.envelope.contactId))).toEqual(new Set(subscribed));
    expect(await harness.db.event.count({ where: { projectId, name: "contact.unsubscribed" } })).toBe(250);

    const back = await runBulk(projectId, BulkAction.SUBSCRIBE, unsubscribed);
    expect(back).toMatchObject({ succeeded: 3n, unchanged: 0n, notFound: 0n });
    expect((await outboxOf(harness.db, projectId)).filter((event) => event.envelope.type === "contact.subscribed")).toHaveLength(3);
  });

  it("deletes contacts", async () => {
    const projectId = newProjectId();
    const ids = await contactsIn(projectId, 5, true);
    const job = await runBulk(projectId, BulkAction.DELETE, [...ids.slice(0, 3), randomUUID()]);
    expect(job).toMatchObject({ succeeded: 3n, unchanged: 0n, notFound: 1n, action: BulkAction.DELETE });
    expect(await harness.db.contact.count({ where: { projectId } })).toBe(2);
  });

  it("takes 1 to 1,000 ids and a known action", async () => {
    const projectId = newProjectId();
    const none = await expectFailure(
      harness.jobs.startBulkJob({ projectId, action: BulkAction.DELETE, contactIds: [] }),
      Code.InvalidArgument,
      "VALIDATION_ERROR",
    );
    expect(errorDetailOf(none)?.fieldViolations[0]).toMatchObject({ field: "ids", code: "too_small" });
    await expectFailure(
      harness.jobs.startBulkJob({ projectId, action: BulkAction.DELETE, contactIds: Array.from({ length: 1_001 }, () => randomUUID()) }),
      Code.InvalidArgument,
      "VALIDATION_ERROR",
    );
    await expectFailure(
      harness.jobs.startBulkJob({ projectId, action: BulkAction.UNSPECIFIED, contactIds: [randomUUID()] }),
      Code.InvalidArgument,
      "VALIDATION_ERROR",
    );
    const most = await runBulk(
      projectId,
      BulkAction.SUBSCRIBE,
      Array.from({ length: 1_000 }, () => randomUUID()),
    );
    expect(most).toMatchObject({ total: 1000n, processed: 1000n, notFound: 1000n });
    await expectFailure(harness.jobs.getBulkJob({ projectId: newProjectId(), jobId: most.jobId }), Code.NotFound, "JOB_NOT_FOUND");
    await expectFailure(harness.jobs.getBulkJob({ projectId, jobId: randomUUID() }), Code.NotFound, "JOB_NOT_FOUND");
  });
});
