import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { errorDetailOf } from "@herald/errors";
import { topics } from "@herald/kafka";
import { ContactSource } from "@herald/proto/herald/contacts/v1/resources_pb";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  type ContactsHarness,
  expectFailure,
  newProjectId,
  outboxOf,
  randomEmail,
  startContacts,
} from "../test-support/contacts-harness.js";

describe("EventsService", () => {
  let harness: ContactsHarness;

  beforeAll(async () => {
    harness = await startContacts(inject("herald"), { worker: false });
  });

  afterAll(() => harness?.stop());

  const track = (projectId: string, email: string, event: string, extra: Record<string, unknown> = {}) =>
    harness.events.trackEvent({ projectId, email, event, ...extra });

  it("upserts the contact and records the event with everything sent, storing only persistent values", async () => {
    const projectId = newProjectId();
    const email = randomEmail();
    const first = await track(projectId, email.toUpperCase(), "signup", {
      data: { plan: "pro", coupon: { value: "SAVE10", persistent: false }, profile: { tier: "gold" }, email: "x", empty: "" },
    });
    expect(first.contactCreated).toBe(true);
    const { contact } = await harness.contacts.getContact({ projectId, contactId: first.contactId });
    expect(contact).toMatchObject({ email, subscribed: true, data: { plan: "pro", profile: { tier: "gold" } } });

    const record = await harness.db.event.findFirstOrThrow({ where: { id: first.eventId } });
    expect(record).toMatchObject({ name: "signup", contactId: first.contactId, projectId });
    expect(record.data).toEqual({ plan: "pro", coupon: "SAVE10", profile: { tier: "gold" }, empty: "" });
    expect(first.createdAt && timestampDate(first.createdAt)).toEqual(record.createdAt);

    const [published] = await outboxOf(harness.db, projectId);
    expect(published).toMatchObject({ topic: topics.contactEvents, key: first.contactId });
    expect(published?.envelope).toMatchObject({
      eventId: first.eventId,
      type: "signup",
      projectId,
      contactId: first.contactId,
      source: "contacts",
    });
    expect(published?.payload).toMatchObject({ eventId: first.eventId, contactEmail: email, data: record.data });

    // Re-tracking the same event records a new one.
    const second = await track(projectId, email, "signup", { data: { plan: null } });
    expect(second).toMatchObject({ contactId: first.contactId, contactCreated: false });
    expect(second.eventId).not.toBe(first.eventId);
    expect(await harness.db.event.count({ where: { contactId: first.contactId, name: "signup" } })).toBe(2);
    expect((await harness.contacts.getContact({ projectId, contactId: first.contactId })).contact?.data).toEqual({
      profile: { tier: "gold" },
    });
  });

  it("keeps an existing contact's subscription unless given; false records the event without resubscribing", async () => {
    const projectId = newProjectId();
    const email = randomEmail();
    await harness.contacts.upsertContact({ projectId, email, source: ContactSource.SEND });
    const tracked = await track(projectId, email, "opened-app");
    expect((await harness.contacts.getContact({ projectId, contactId: tracked.contactId })).contact?.subscribed).toBe(false);
    await track(projectId, email, "opened-app", { subscribed: false });
    expect((await outboxOf(harness.db, projectId)).map((event) => event.envelope.type)).toEqual(["opened-app", "opened-app"]);

    await track(projectId, email, "upgraded", { subscribed: true });
    const types = (await outboxOf(harness.db, projectId)).map((event) => event.envelope.type);
    expect(types.slice(2).sort()).toEqual(["contact.subscribed", "upgraded"]);
    expect((await harness.contacts.getContact({ projectId, contactId: tracked.contactId })).contact?.subscribed).toBe(true);

    const fresh = await track(projectId, randomEmail(), "first", { subscribed: false });
    expect((await harness.contacts.getContact({ projectId, contactId: fresh.contactId })).contact?.subscribed).toBe(false);
  });

  it("refuses reserved and malformed names with VALIDATION_ERROR on the event field, recording nothing", async () => {
    const projectId = newProjectId();
    for (const name of ["email.open", "contact.subscribed", "contact.unsubscribed", "segment.vip.entry", "segment.vip.exit"]) {
      const failure = await expectFailure(track(projectId, randomEmail(), name), Code.InvalidArgument, "VALIDATION_ERROR");
      expect(errorDetailOf(failure)?.fieldViolations).toEqual([expect.objectContaining({ field: "event", code: "reserved_event" })]);
    }
    await expectFailure(track(projectId, randomEmail(), ""), Code.InvalidArgument, "VALIDATION_ERROR");
    await expectFailure(track(projectId, randomEmail(), "x".repeat(256)), Code.InvalidArgument, "VALIDATION_ERROR");
    await expectFailure(track(projectId, "nobody", "signup"), Code.InvalidArgument, "VALIDATION_ERROR");
    expect(await harness.db.contact.count({ where: { projectId } })).toBe(0);
    expect(await outboxOf(harness.db, projectId)).toEqual([]);
  });

  it("creates one contact when tracks of a new email race, and records every event", async () => {
    const projectId = newProjectId();
    const email = randomEmail();
    const results = await Promise.all(Array.from({ length: 20 }, () => track(projectId, email, "burst", { data: { n: 1 } })));
    expect(results.filter((result) => result.contactCreated)).toHaveLength(1);
    expect(new Set(results.map((result) => result.contactId)).size).toBe(1);
    expect(await harness.db.event.count({ where: { projectId } })).toBe(20);
    expect(await harness.db.contactField.count({ where: { projectId } })).toBe(1);
  });

  describe("reading events", () => {
    const projectId = newProjectId();
    const ann = randomEmail("ann");
    let annId = "";

    beforeAll(async () => {
      for (let index = 0; index < 25; index++) {
        const tracked = await track(projectId, index % 2 === 0 ? ann : randomEmail(), index % 3 === 0 ? "purchase" : "page-view", {
          data: { index },
        });
        if (index === 0) annId = tracked.contactId;
      }
    });

    it("lists newest first in pages, with filters and the total on the first page", async () => {
      const names: string[] = [];
      const indexes: number[] = [];
      let cursor = "";
      const totals: bigint[] = [];
      do {
        const page = await harness.events.listEvents({ projectId, limit: 10, cursor });
        totals.push(page.total);
        names.push(...page.events.map((event) => event.name));
        indexes.push(...page.events.map((event) => Number(event.data?.index)));
        cursor = page.hasMore ? page.cursor : "";
      } while (cursor);
      expect(indexes).toEqual(Array.from({ length: 25 }, (_, index) => 24 - index));
      expect(totals).toEqual([25n, 0n, 0n]);

      const purchases = await harness.events.listEvents({ projectId, name: "purchase" });
      expect(purchases.total).toBe(9n);
      expect(purchases.events.every((event) => event.name === "purchase")).toBe(true);
      const annEvents = await harness.events.listEvents({ projectId, contactId: annId });
      expect(annEvents.total).toBe(13n);
      expect(annEvents.events.every((event) => event.contactEmail === ann && event.contactId === annId)).toBe(true);
      expect((await harness.events.listEvents({ projectId, contactId: "nope" })).events).toEqual([]);
      await expectFailure(harness.events.listEvents({ projectId, cursor: "bad" }), Code.InvalidArgument, "INVALID_CURSOR");
    });

    it("answers stats, names, top events and usage", async () => {
      expect(await harness.events.getEventStats({ projectId })).toMatchObject({
        total: 25n,
        last24Hours: 25n,
        last7Days: 25n,
        last30Days: 25n,
        distinctNames: 2n,
        contactsWithEvents: 13n,
      });
      const names = await harness.events.listEventNames({ projectId });
      expect(names.names.map((name) => [name.name, name.count])).toEqual([
        ["page-view", 16n],
        ["purchase", 9n],
      ]);
      expect(names.names[0]?.lastSeenAt).toBeDefined();
      const top = await harness.events.getTopEvents({ projectId, limit: 1 });
      expect(top.events.map((name) => name.name)).toEqual(["page-view"]);
      const future = await harness.events.getTopEvents({ projectId, since: timestampFromDate(new Date(Date.now() + 60_000)) });
      expect(future.events).toEqual([]);
      expect((await harness.events.getEventUsage({ projectId, name: "purchase" })).usages).toEqual([]);
    });

    it("deletes every event of a name", async () => {
      const otherProject = newProjectId();
      await track(otherProject, randomEmail(), "purchase");
      expect((await harness.events.deleteEvents({ projectId, name: "purchase" })).deleted).toBe(9n);
      expect((await harness.events.deleteEvents({ projectId, name: "purchase" })).deleted).toBe(0n);
      expect((await harness.events.listEventNames({ projectId })).names.map((name) => name.name)).toEqual(["page-view"]);
      expect(await harness.db.event.count({ where: { projectId: otherProject } })).toBe(1);
      await expectFailure(harness.events.deleteEvents({ projectId, name: "" }), Code.InvalidArgument, "EVENT_NAME_REQUIRED");
    });
  });

  it("deletes a contact's events with the contact", async () => {
    const projectId = newProjectId();
    const tracked = await track(projectId, randomEmail(), "x");
    await harness.contacts.deleteContact({ projectId, contactId: tracked.contactId });
    expect(await harness.db.event.count({ where: { id: tracked.eventId } })).toBe(0);
  });
});
