import { SegmentType } from "@herald/proto/herald/contacts/v1/segments_service_pb";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type ContactsHarness, eventually, newProjectId, outboxOf, randomEmail, startContacts } from "../test-support/contacts-harness.js";
import { evaluateMembership } from "./membership.js";

const vipCondition = {
  logic: "AND",
  groups: [{ filters: [{ field: "data.tier", operator: "equals", value: "vip" }] }],
};

describe("tracked segment membership", () => {
  let harness: ContactsHarness;
  let quiet: ContactsHarness;

  beforeAll(async () => {
    harness = await startContacts(inject("herald"), { worker: false, watch: true });
    quiet = await startContacts(inject("herald"), { worker: false });
  });

  afterAll(async () => {
    await harness?.stop();
    await quiet?.stop();
  });

  async function contactsWith(on: ContactsHarness, projectId: string, tiers: string[]): Promise<string[]> {
    const ids: string[] = [];
    for (const tier of tiers) {
      const { contact } = await on.contacts.upsertContact({ projectId, email: randomEmail(tier), data: { tier } });
      ids.push(contact?.id ?? "");
    }
    return ids;
  }

  const segmentEvents = async (on: ContactsHarness, projectId: string, prefix: string) =>
    (await on.db.event.findMany({ where: { projectId, name: { startsWith: prefix } }, orderBy: { createdAt: "asc" } })).map((event) => ({
      name: event.name,
      contactId: event.contactId,
    }));

  it("emits each entry and exit once when two replicas evaluate the same segment at the same time", async () => {
    // The racing evaluators are these four calls alone: this harness runs no membership watch.
    const projectId = newProjectId();
    const ids = await contactsWith(quiet, projectId, ["vip", "vip", "basic", "vip"]);
    const { segment } = await quiet.segments.createSegment({
      projectId,
      name: "Race VIPs",
      type: SegmentType.DYNAMIC,
      condition: vipCondition,
    });
    // Untracked: created without events or stored members.
    expect(segment?.memberCount).toBe(3n);
    const row = await quiet.db.segment.findUniqueOrThrow({ where: { id: segment?.id } });
    await quiet.db.segment.update({ where: { id: row.id }, data: { trackMembership: true } });
    const tracked = { ...row, trackMembership: true, projectId, condition: row.condition as never, type: "DYNAMIC" as const };

    const results = await Promise.all(Array.from({ length: 4 }, () => evaluateMembership(quiet.db, tracked)));
    expect(results.reduce((sum, result) => sum + result.added, 0)).toBe(3);
    const entries = await segmentEvents(quiet, projectId, "segment.race-vips.");
    expect(entries).toHaveLength(3);
    expect(new Set(entries.map((event) => event.contactId))).toEqual(new Set([ids[0], ids[1], ids[3]]));

    await quiet.contacts.updateContact({ projectId, contactId: ids[1] as string, data: { tier: "basic" } });
    await quiet.contacts.updateContact({ projectId, contactId: ids[2] as string, data: { tier: "vip" } });
    const second = await Promise.all(Array.from({ length: 4 }, () => evaluateMembership(quiet.db, tracked)));
    expect(second.reduce((sum, result) => sum + result.added, 0)).toBe(1);
    expect(second.reduce((sum, result) => sum + result.removed, 0)).toBe(1);
    const all = await segmentEvents(quiet, projectId, "segment.race-vips.");
    expect(all.filter((event) => event.name === "segment.race-vips.exit")).toEqual([{ name: "segment.race-vips.exit", contactId: ids[1] }]);
    expect(all.filter((event) => event.name === "segment.race-vips.entry")).toHaveLength(4);
    // Each transition also leaves through the outbox to herald.contact-events.v1.
    const published = (await outboxOf(quiet.db, projectId)).filter((event) => event.envelope.type.startsWith("segment."));
    expect(published).toHaveLength(5);
    expect(published[0]?.payload?.data).toMatchObject({ segmentId: row.id, segmentName: "Race VIPs" });
  });

  it("follows a contact that just changed without a compute", async () => {
    const projectId = newProjectId();
    const [id] = await contactsWith(harness, projectId, ["basic"]);
    const { segment } = await harness.segments.createSegment({
      projectId,
      name: "Instant VIPs",
      type: SegmentType.DYNAMIC,
      condition: vipCondition,
      trackMembership: true,
    });
    expect(segment?.memberCount).toBe(0n);

    await harness.contacts.updateContact({ projectId, contactId: id as string, data: { tier: "vip" } });
    await eventually(async () => (await segmentEvents(harness, projectId, "segment.instant-vips.entry")).length === 1);
    await harness.events.trackEvent({
      projectId,
      email: (await harness.contacts.getContact({ projectId, contactId: id as string })).contact?.email ?? "",
      event: "downgrade",
      data: { tier: "basic" },
    });
    await eventually(async () => (await segmentEvents(harness, projectId, "segment.instant-vips.exit")).length === 1);
    expect((await harness.segments.getSegment({ projectId, id: segment?.id ?? "" })).segment?.memberCount).toBe(0n);
    expect(await segmentEvents(harness, projectId, "segment.instant-vips.")).toHaveLength(2);
  });

  it("streams an audience in id order, resumable, skipping unsubscribed and snoozed contacts", async () => {
    const projectId = newProjectId();
    const ids = await contactsWith(harness, projectId, ["vip", "vip", "vip", "basic", "vip"]);
    await harness.contacts.updateContact({ projectId, contactId: ids[1] as string, subscribed: false });
    await harness.db.contact.update({
      where: { projectId_id: { projectId, id: ids[4] as string } },
      data: { snoozedUntil: new Date(Date.now() + 3_600_000) },
    });
    const expected = [ids[0], ids[2]].sort();

    const batches: string[][] = [];
    for await (const batch of harness.segments.streamAudience({
      projectId,
      audience: { kind: { case: "condition", value: vipCondition } },
      batchSize: 1,
    })) {
      batches.push(batch.contacts.map((contact) => contact.id));
      for (const contact of batch.contacts) expect(JSON.parse(contact.dataJson)).toEqual({ tier: "vip" });
    }
    expect(batches).toEqual(expected.map((id) => [id]));
    const { count } = await harness.segments.countAudience({ projectId, audience: { kind: { case: "condition", value: vipCondition } } });
    expect(count).toBe(2n);

    const reachable = [ids[0], ids[2], ids[3]].sort() as string[];
    const resumed: string[] = [];
    for await (const batch of harness.segments.streamAudience({
      projectId,
      audience: { kind: { case: "all", value: {} } },
      afterContactId: reachable[0],
    })) {
      resumed.push(...batch.contacts.map((contact) => contact.id));
    }
    expect(resumed).toEqual(reachable.slice(1));
  });
});
