import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { createEnvelope, createKafka, type EventEnvelope, encodeEnvelope, ensureTopics, topics } from "@herald/kafka";
import { createLogger } from "@herald/platform";
import { ContactSource } from "@herald/proto/herald/contacts/v1/resources_pb";
import { SegmentType } from "@herald/proto/herald/contacts/v1/segments_service_pb";
import { ContactEventSchema } from "@herald/proto/herald/events/v1/contact_event_pb";
import { type EmailActivity, EmailActivitySchema, EmailCategory } from "@herald/proto/herald/events/v1/email_activity_pb";
import { createTestKafka, startGroupAtEnd } from "@herald/testing";
import type { Producer } from "kafkajs";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type ContactsHarness, eventually, newProjectId, outboxOf, randomEmail, startContacts } from "../test-support/contacts-harness.js";
import { createEmailActivityConsumer, readEmailActivity } from "./email-activity-consumer.js";

type ActivityFields = Partial<Omit<EmailActivity, "$typeName">>;

function activity(
  type: string,
  projectId: string,
  contactId: string,
  fields: ActivityFields = {},
  options: { occurredAt?: Date; eventId?: string } = {},
): EventEnvelope {
  return createEnvelope({
    type,
    projectId,
    contactId,
    source: "delivery",
    occurredAt: options.occurredAt,
    eventId: options.eventId,
    payloadSchema: EmailActivitySchema,
    payload: create(EmailActivitySchema, { emailId: randomUUID(), category: EmailCategory.TRANSACTIONAL, ...fields }),
  });
}

describe("reading an email-activity envelope", () => {
  const projectId = randomUUID();
  const contactId = randomUUID();
  const receivedAt = new Date("2030-01-02T03:04:05.000Z");

  it("maps it to the contact's event, named as its type, with the payload's data and the time it happened", () => {
    const occurredAt = new Date("2030-01-01T00:00:00.123Z");
    const envelope = activity(
      "email.click",
      projectId,
      contactId,
      { emailId: "e-1", category: EmailCategory.CAMPAIGN, campaignId: "c-1", url: "https://example.com/a", recipient: "x@example.com" },
      { occurredAt },
    );
    expect(readEmailActivity(envelope, receivedAt)).toEqual({
      kind: "record",
      record: {
        id: envelope.eventId,
        projectId,
        contactId,
        name: "email.click",
        data: { emailId: "e-1", category: "CAMPAIGN", campaignId: "c-1", url: "https://example.com/a" },
        occurredAt,
      },
    });
  });

  it("leaves deferrals and contactless activity off the timeline", () => {
    expect(readEmailActivity(activity("email.deferred", projectId, contactId, { reason: "421 try later" }), receivedAt)).toEqual({
      kind: "ignore",
    });
    expect(readEmailActivity(activity("email.sent", projectId, ""), receivedAt)).toEqual({ kind: "ignore" });
  });

  it("derives a stable uuid from an event id that is none, and falls back to the receipt time without an occurred_at", () => {
    const first = readEmailActivity(activity("email.open", projectId, contactId, {}, { eventId: "evt-42" }), receivedAt);
    const again = readEmailActivity(activity("email.open", projectId, contactId, {}, { eventId: "evt-42" }), receivedAt);
    expect(first.kind === "record" && first.record.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(first.kind === "record" && again.kind === "record" && first.record.id === again.record.id).toBe(true);
    const timeless = { ...activity("email.open", projectId, contactId), occurredAt: undefined };
    expect(readEmailActivity(timeless, receivedAt)).toMatchObject({ kind: "record", record: { occurredAt: receivedAt } });
  });

  it("calls anything else malformed", () => {
    const foreign = createEnvelope({
      type: "email.open",
      projectId,
      contactId,
      source: "delivery",
      payloadSchema: ContactEventSchema,
      payload: create(ContactEventSchema, {}),
    });
    expect(readEmailActivity(foreign, receivedAt)).toMatchObject({ kind: "malformed" });
    expect(readEmailActivity(activity("email.open", projectId, "not-a-uuid"), receivedAt)).toMatchObject({ kind: "malformed" });
    expect(readEmailActivity(activity("email.open", "nope", contactId), receivedAt)).toMatchObject({ kind: "malformed" });
    expect(readEmailActivity(activity("signup", projectId, contactId), receivedAt)).toMatchObject({ kind: "malformed" });
    expect(readEmailActivity(activity("email.open", projectId, contactId, { emailId: "" }), receivedAt)).toMatchObject({
      kind: "malformed",
    });
  });
});

describe("the email-activity consumer", () => {
  let harness: ContactsHarness;
  let producer: Producer;
  let consumer: ReturnType<typeof createEmailActivityConsumer>;
  let nudges = 0;

  beforeAll(async () => {
    const herald = inject("herald");
    harness = await startContacts(herald, { worker: false });
    const watch = harness.startWatch();
    const testKafka = createTestKafka(herald.kafkaBrokers);
    const admin = testKafka.admin();
    await admin.connect();
    await ensureTopics(admin, [topics.emailActivity]);
    // A group of its own: the shared stack's contacts service consumes this topic too, for its own database. It
    // starts at the topic's end: what the test publishes, not what earlier tests of the run left there.
    const groupId = `contacts.email-activity.test-${randomUUID()}`;
    await startGroupAtEnd(admin, groupId, topics.emailActivity);
    await admin.disconnect();
    producer = testKafka.producer();
    await producer.connect();
    consumer = createEmailActivityConsumer({
      kafka: createKafka({ clientId: "contacts-email-activity-test", brokers: herald.kafkaBrokers }),
      db: harness.db,
      pool: harness.pool,
      logger: createLogger({ name: "email-activity-test", level: "silent" }),
      nudgeOutbox: () => nudges++,
      contactsChanged: watch.contactsChanged,
      groupId,
      fromBeginning: true,
      // Small, so that one Kafka batch spans several transactions.
      chunkSize: 3,
    });
    await consumer.start();
  }, 120_000);

  afterAll(async () => {
    await consumer?.stop();
    await producer?.disconnect();
    await harness?.stop();
  });

  /** Publishes in order to one partition, so that a later message proves the earlier ones were dealt with. */
  async function publish(...messages: Array<EventEnvelope | Uint8Array>) {
    await producer.send({
      topic: topics.emailActivity,
      messages: messages.map((message) => ({
        partition: 0,
        key: "email-activity-test",
        value: Buffer.from(message instanceof Uint8Array ? message : encodeEnvelope(message)),
      })),
    });
  }

  async function newContact(projectId: string, subscribed = true): Promise<string> {
    const { contact } = await harness.contacts.upsertContact({ projectId, email: randomEmail(), subscribed, source: ContactSource.API });
    return contact?.id ?? "";
  }

  const recorded = (id: string) => harness.db.event.count({ where: { id } });
  const untilRecorded = (envelope: EventEnvelope) => eventually(async () => (await recorded(envelope.eventId)) === 1, 30_000);

  it("puts each kind of activity on the contact's timeline, named as its type, at the time it happened", async () => {
    const projectId = newProjectId();
    const contactId = await newContact(projectId);
    const emailId = randomUUID();
    const campaignId = randomUUID();
    const at = (minute: number) => new Date(Date.UTC(2030, 0, 1, 12, minute, 0, 0));
    const campaign = { emailId, category: EmailCategory.CAMPAIGN, campaignId };
    const envelopes = [
      activity("email.sent", projectId, contactId, campaign, { occurredAt: at(1) }),
      activity("email.deferred", projectId, contactId, { ...campaign, reason: "421 busy" }, { occurredAt: at(2) }),
      activity("email.delivery", projectId, contactId, campaign, { occurredAt: at(3) }),
      activity("email.open", projectId, contactId, campaign, { occurredAt: at(4) }),
      activity("email.click", projectId, contactId, { ...campaign, url: "https://example.com/pricing" }, { occurredAt: at(5) }),
      activity("email.bounce", projectId, contactId, { ...campaign, reason: "550 5.1.1 no such user" }, { occurredAt: at(6) }),
      activity(
        "email.failed",
        projectId,
        contactId,
        { emailId, category: EmailCategory.WORKFLOW, workflowId: "wf-1", reason: "dkim-key" },
        {
          occurredAt: at(7),
        },
      ),
    ];
    await publish(...envelopes);
    await untilRecorded(envelopes[6] as EventEnvelope);

    const timeline = await harness.events.listEvents({ projectId, contactId });
    expect(
      timeline.events.map((event) => ({
        id: event.id,
        name: event.name,
        data: event.data,
        at: event.createdAt && timestampDate(event.createdAt),
      })),
    ).toEqual([
      {
        id: envelopes[6]?.eventId,
        name: "email.failed",
        data: { emailId, category: "WORKFLOW", workflowId: "wf-1", reason: "dkim-key" },
        at: at(7),
      },
      {
        id: envelopes[5]?.eventId,
        name: "email.bounce",
        data: { emailId, category: "CAMPAIGN", campaignId, reason: "550 5.1.1 no such user" },
        at: at(6),
      },
      {
        id: envelopes[4]?.eventId,
        name: "email.click",
        data: { emailId, category: "CAMPAIGN", campaignId, url: "https://example.com/pricing" },
        at: at(5),
      },
      { id: envelopes[3]?.eventId, name: "email.open", data: { emailId, category: "CAMPAIGN", campaignId }, at: at(4) },
      { id: envelopes[2]?.eventId, name: "email.delivery", data: { emailId, category: "CAMPAIGN", campaignId }, at: at(3) },
      { id: envelopes[0]?.eventId, name: "email.sent", data: { emailId, category: "CAMPAIGN", campaignId }, at: at(1) },
    ]);
    expect(timeline.events.every((event) => event.contactId === contactId)).toBe(true);
    expect((await harness.events.listEvents({ projectId, name: "email.open" })).events.map((event) => event.contactId)).toEqual([
      contactId,
    ]);
    expect((await harness.events.listEventNames({ projectId })).names.map((name) => [name.name, name.count])).toEqual([
      ["email.bounce", 1n],
      ["email.click", 1n],
      ["email.delivery", 1n],
      ["email.failed", 1n],
      ["email.open", 1n],
      ["email.sent", 1n],
    ]);
    // A bounce leaves the subscription alone: delivery suppresses the address itself.
    expect((await harness.contacts.getContact({ projectId, contactId })).contact?.subscribed).toBe(true);

    // Usable in conditions like any event: of two contacts, the one that clicked.
    await newContact(projectId);
    const clicked = { logic: "AND", groups: [{ filters: [{ field: "event.email.click", operator: "triggered" }] }] };
    const { count } = await harness.segments.countAudience({ projectId, audience: { kind: { case: "condition", value: clicked } } });
    expect(count).toBe(1n);
  });

  it("records a redelivered envelope once", async () => {
    const projectId = newProjectId();
    const contactId = await newContact(projectId);
    const open = activity("email.open", projectId, contactId);
    await publish(open, open, open, open);
    await publish(open);
    const sentinel = activity("email.click", projectId, contactId);
    await publish(sentinel);
    await untilRecorded(sentinel);
    expect(await harness.db.event.count({ where: { projectId, name: "email.open" } })).toBe(1);
    expect(await recorded(open.eventId)).toBe(1);
  });

  it("ignores an envelope of another project that names the contact", async () => {
    const projectId = newProjectId();
    const intruder = newProjectId();
    const contactId = await newContact(projectId);
    const foreign = activity("email.complaint", intruder, contactId);
    const sentinel = activity("email.sent", projectId, contactId);
    await publish(foreign, sentinel);
    await untilRecorded(sentinel);
    expect(await recorded(foreign.eventId)).toBe(0);
    expect(await harness.db.event.count({ where: { projectId: intruder } })).toBe(0);
    expect((await harness.contacts.getContact({ projectId, contactId })).contact?.subscribed).toBe(true);
  });

  it("unsubscribes a contact that complained, emitting contact.unsubscribed once", async () => {
    const projectId = newProjectId();
    const contactId = await newContact(projectId);
    const alreadyOut = await newContact(projectId, false);
    const emailId = randomUUID();
    const complaint = activity("email.complaint", projectId, contactId, { emailId });
    const second = activity("email.complaint", projectId, contactId);
    const quietComplaint = activity("email.complaint", projectId, alreadyOut);
    const nudgesBefore = nudges;
    await publish(complaint, complaint, quietComplaint);
    await publish(complaint, second);
    await untilRecorded(second);

    expect((await harness.contacts.getContact({ projectId, contactId })).contact?.subscribed).toBe(false);
    expect((await harness.contacts.getContact({ projectId, contactId: alreadyOut })).contact?.subscribed).toBe(false);
    const names = (await harness.events.listEvents({ projectId, contactId })).events.map((event) => event.name).sort();
    expect(names).toEqual(["contact.unsubscribed", "email.complaint", "email.complaint"]);
    expect(await harness.db.event.count({ where: { projectId, contactId: alreadyOut } })).toBe(1);
    const published = (await outboxOf(harness.db, projectId)).filter((event) => event.envelope.type === "contact.unsubscribed");
    expect(published).toHaveLength(1);
    expect(published[0]?.envelope.contactId).toBe(contactId);
    expect(published[0]?.payload?.data).toEqual({ reason: "complaint", emailId });
    // The email.* events themselves are not re-published: consumers read them on herald.email-activity.v1.
    expect((await outboxOf(harness.db, projectId)).filter((event) => event.envelope.type.startsWith("email."))).toEqual([]);
    expect(nudges).toBeGreaterThan(nudgesBefore);
  });

  it("skips activity of a deleted contact and goes on with the next", async () => {
    const projectId = newProjectId();
    const gone = await newContact(projectId);
    const kept = await newContact(projectId);
    await harness.contacts.deleteContact({ projectId, contactId: gone });
    const lost = activity("email.open", projectId, gone);
    const next = activity("email.open", projectId, kept);
    await publish(lost, next);
    await untilRecorded(next);
    expect(await recorded(lost.eventId)).toBe(0);
    expect(await harness.db.event.count({ where: { contactId: gone } })).toBe(0);
  });

  it("logs and skips malformed messages without stopping", async () => {
    const projectId = newProjectId();
    const contactId = await newContact(projectId);
    const foreign = createEnvelope({
      type: "email.open",
      projectId,
      contactId,
      source: "delivery",
      payloadSchema: ContactEventSchema,
      payload: create(ContactEventSchema, { eventId: "x" }),
    });
    const badContact = activity("email.open", projectId, "not-a-uuid");
    const noEmail = activity("email.open", projectId, contactId, { emailId: "" });
    const next = activity("email.sent", projectId, contactId);
    await publish(Uint8Array.of(0xff, 0xff, 0xff, 0x07), foreign, badContact, noEmail, next);
    await untilRecorded(next);
    expect(await harness.db.event.count({ where: { projectId } })).toBe(1);
  });

  it("re-evaluates the contact's tracked segments when activity arrives", async () => {
    const projectId = newProjectId();
    const contactId = await newContact(projectId);
    await harness.segments.createSegment({
      projectId,
      name: "Clickers",
      type: SegmentType.DYNAMIC,
      condition: { logic: "AND", groups: [{ filters: [{ field: "event.email.click", operator: "triggered" }] }] },
      trackMembership: true,
    });
    await publish(activity("email.click", projectId, contactId, { url: "https://example.com" }));
    await eventually(async () => (await harness.db.event.count({ where: { projectId, contactId, name: "segment.clickers.entry" } })) === 1);
  });
});
