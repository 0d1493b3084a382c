import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createContactUpserts } from "../contacts/contact-upserts.js";
import type { TrackedEventWrite } from "../db/tracked-events.js";
import { type JsonObject, patchOfData } from "../domain/contact-data.js";
import { pendingContactEvent } from "../events/contact-event-outbox.js";
import { type ContactsHarness, newProjectId, outboxOf, randomEmail, startContacts } from "../test-support/contacts-harness.js";
import { createTrackBatcher } from "./track-batcher.js";

describe("the track batcher", () => {
  let harness: ContactsHarness;

  beforeAll(async () => {
    harness = await startContacts(inject("herald"), { worker: false });
  });

  afterAll(() => harness?.stop());

  function batcherFor(maxInFlight: number) {
    let batches = 0;
    let alone = 0;
    const upserts = createContactUpserts({
      pool: harness.pool,
      knownFields: harness.knownFields,
      nudgeOutbox: () => {},
      contactsChanged: () => {},
    });
    const batcher = createTrackBatcher({
      pool: harness.pool,
      maxInFlight,
      written: () => batches++,
      writeAlone: async (write) => {
        alone++;
        const { contact, created } = await upserts.upsert({ ...write, subscribed: undefined, source: "track" });
        return { contactId: contact.id, created };
      },
    });
    return { batcher, counts: () => ({ batches, alone }) };
  }

  const write = (projectId: string, email: string, name: string, data: JsonObject): TrackedEventWrite => {
    const patch = patchOfData(data);
    return {
      projectId,
      email,
      patch,
      event: pendingContactEvent({ id: randomUUID(), name, projectId, contactEmail: email, data: patch.sent, occurredAt: new Date() }),
      newFields: Object.entries(patch.set).map(([key, value]) => ({ key, type: typeof value === "number" ? "number" : "string" })),
    };
  };

  it("writes concurrent calls in few statements, composing each contact's patches in call order", async () => {
    const { batcher, counts } = batcherFor(1);
    const projectId = newProjectId();
    const [ann, bob] = [randomEmail("ann"), randomEmail("bob")];
    await harness.contacts.upsertContact({ projectId, email: bob, data: { plan: "free", city: "Lyon" } });
    const writes = [
      write(projectId, ann, "a1", { plan: "pro", step: 1 }),
      write(projectId, bob, "b1", { city: null, step: 1 }),
      write(projectId, ann, "a2", { plan: null, step: 2, coupon: { value: "X", persistent: false } }),
      write(projectId, ann, "a3", { step: 3 }),
      write(projectId, bob, "b2", { city: "Paris" }),
    ];
    const results = await Promise.all(writes.map((call) => batcher.track(call)));
    // The first call went alone (nothing was in flight); the four others waited for it and went together.
    expect(counts()).toEqual({ batches: 2, alone: 0 });
    expect(results.map((result) => result.created)).toEqual([true, false, false, false, false]);
    const annId = results[0]?.contactId;
    expect(results.map((result) => result.contactId)).toEqual([annId, results[1]?.contactId, annId, annId, results[1]?.contactId]);

    const contacts = await harness.db.contact.findMany({ where: { projectId }, orderBy: { email: "asc" } });
    expect(contacts.map((contact) => [contact.email, contact.subscribed, contact.data])).toEqual([
      [ann, true, { step: 3 }],
      [bob, true, { plan: "free", city: "Paris", step: 1 }],
    ]);
    const events = await outboxOf(harness.db, projectId);
    expect(events.map((event) => event.envelope.type)).toEqual(["a1", "b1", "a2", "a3", "b2"]);
    expect(events.map((event) => event.envelope.contactId)).toEqual(results.map((result) => result.contactId));
    expect(events[2]?.payload?.data).toEqual({ plan: null, step: 2, coupon: "X" });
    const records = await harness.db.event.findMany({ where: { projectId } });
    expect(records).toHaveLength(5);
    const fields = await harness.db.contactField.findMany({ where: { projectId }, orderBy: { key: "asc" } });
    expect(fields.map((field) => field.key)).toEqual(["city", "plan", "step"]);
  });

  it("writes each call of a failed batch alone, so that one bad call fails alone", async () => {
    const { batcher, counts } = batcherFor(1);
    const projectId = newProjectId();
    const first = batcher.track(write(projectId, randomEmail(), "first", {}));
    const good = write(projectId, randomEmail(), "good", { n: 1 });
    // A project id no uuid column takes: the batch statement fails as a whole.
    const bad = { ...write(projectId, randomEmail(), "bad", {}), projectId: "not-a-uuid" };
    const outcomes = await Promise.allSettled([first, batcher.track(good), batcher.track(bad)]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["fulfilled", "fulfilled", "rejected"]);
    expect(counts()).toEqual({ batches: 1, alone: 2 });
    expect((await outboxOf(harness.db, projectId)).map((event) => event.envelope.type)).toEqual(["first", "good"]);
  });
});
