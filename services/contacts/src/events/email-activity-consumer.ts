import { createHash, randomUUID } from "node:crypto";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import {
  decodeEnvelope,
  type EventConsumer,
  type EventEnvelope,
  managedConsumer,
  pacedCommits,
  payloadOf,
  topics,
  traceContextOf,
} from "@herald/kafka";
import type { Logger } from "@herald/platform";
import { type EmailActivity, EmailActivitySchema, EmailCategory } from "@herald/proto/herald/events/v1/email_activity_pb";
import { type Context, context, type Link, SpanKind, trace } from "@opentelemetry/api";
import type { Consumer, Kafka, KafkaMessage } from "kafkajs";
import type { ContactsChanged } from "../contacts/contacts-changed.js";
import { setSubscribed } from "../db/bulk-jobs.js";
import type { Db, SqlPool, Tx } from "../db/client.js";
import { type EmailActivityRecord, type RecordedEmailActivity, recordEmailActivity } from "../db/email-activity-events.js";
import { insertContactEvents } from "../db/event-records.js";
import type { JsonObject } from "../domain/contact-data.js";
import { maxEventNameLength } from "../domain/event-name.js";
import { isId } from "../domain/ids.js";
import { subscriptionEventName } from "../domain/subscription.js";
import { pendingContactEvent } from "./contact-event-outbox.js";

export const emailActivityGroupId = "contacts.email-activity";

/** A spam complaint: the contact is unsubscribed (delivery suppresses the address as well). */
export const complaintEventName = "email.complaint";

/**
 * Types on the topic that are not the contact's activity: a deferral is a temporary
 * failure that delivery retries, invisible to the recipient, and one per retry.
 */
const offTimeline = new Set(["email.deferred"]);

const eventTypePattern = /^email\.[a-z][a-z0-9_.-]*$/;

/** What one envelope of herald.email-activity.v1 means to the contacts service. */
export type EmailActivityReading =
  | { kind: "record"; record: EmailActivityRecord }
  /** Not timeline material (no contact, a deferral): skipped silently. */
  | { kind: "ignore" }
  /** A producer's bug: skipped with a warning, never retried. */
  | { kind: "malformed"; reason: string };

/**
 * Maps an email-activity envelope to the event recorded on its contact: named as the
 * envelope's type, created when the activity happened, with the data of
 * docs/api-decisions.md "Email activity on the contact timeline".
 */
export function readEmailActivity(envelope: EventEnvelope, receivedAt: Date): EmailActivityReading {
  if (!envelope.contactId || offTimeline.has(envelope.type)) return { kind: "ignore" };
  if (!eventTypePattern.test(envelope.type) || envelope.type.length > maxEventNameLength) {
    return { kind: "malformed", reason: "type is not an email.* event name" };
  }
  if (!isId(envelope.projectId)) return { kind: "malformed", reason: "project_id is not a uuid" };
  if (!isId(envelope.contactId)) return { kind: "malformed", reason: "contact_id is not a uuid" };
  const id = recordIdOf(envelope.eventId);
  if (!id) return { kind: "malformed", reason: "event_id is missing" };
  let activity: EmailActivity | undefined;
  try {
    activity = payloadOf(envelope, EmailActivitySchema);
  } catch {
    activity = undefined;
  }
  if (!activity) return { kind: "malformed", reason: "payload is not an EmailActivity" };
  if (!activity.emailId) return { kind: "malformed", reason: "payload has no email_id" };
  const data: JsonObject = { emailId: activity.emailId };
  const category = activity.category === EmailCategory.UNSPECIFIED ? undefined : EmailCategory[activity.category];
  if (category) data.category = category;
  if (activity.campaignId) data.campaignId = activity.campaignId;
  if (activity.workflowId) data.workflowId = activity.workflowId;
  if (activity.url) data.url = activity.url;
  if (activity.reason) data.reason = activity.reason;
  return {
    kind: "record",
    record: {
      id,
      projectId: envelope.projectId.toLowerCase(),
      contactId: envelope.contactId.toLowerCase(),
      name: envelope.type,
      data: withoutNul(data),
      occurredAt: occurredAtOf(envelope, receivedAt),
    },
  };
}

/**
 * The event record's id: the envelope's own when it is a uuid (delivery's always
 * are), else a uuid derived from it, so that a redelivery maps to the same record.
 */
function recordIdOf(eventId: string): string | undefined {
  if (isId(eventId)) return eventId.toLowerCase();
  if (!eventId) return undefined;
  const hex = createHash("sha1").update(`herald.email-activity ${eventId}`).digest("hex");
  const variant = ((Number.parseInt(hex.slice(16, 18), 16) & 0x3f) | 0x80).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(18, 20)}-${hex.slice(20, 32)}`;
}

// Postgres timestamptz takes years up to 294276, toISOString writes 5+ digit years that it does not parse.
const latestTime = Date.UTC(9999, 11, 31);

function occurredAtOf(envelope: EventEnvelope, receivedAt: Date): Date {
  const occurredAt = envelope.occurredAt ? timestampDate(envelope.occurredAt) : undefined;
  const time = occurredAt?.getTime() ?? Number.NaN;
  return Number.isFinite(time) && time > 0 && time <= latestTime ? (occurredAt as Date) : receivedAt;
}

/** jsonb refuses U+0000 in strings; a provider's reason may carry one. */
function withoutNul(data: JsonObject): JsonObject {
  return Object.fromEntries(
    Object.entries(data).map(([key, value]) => [key, typeof value === "string" ? value.replaceAll("\u0000", "") : value]),
  );
}

/**
 * Consumes herald.email-activity.v1 and shows the activity on each named contact's
 * timeline, a Kafka batch at a time: each chunk of messages is one transaction of a
 * few statements (a campaign of 100,000 sends flows through here), and a chunk's
 * offsets are resolved only after it commits. Delivery is at least once; the event
 * id makes the record idempotent (see recordEmailActivity). A spam complaint
 * unsubscribes the contact in the same transaction, emitting contact.unsubscribed
 * as every subscription change does. Messages that are no envelope or no
 * EmailActivity are logged and skipped, never retried: they would block their
 * partition for ever.
 */
export function createEmailActivityConsumer(deps: {
  kafka: Kafka;
  db: Db;
  /** pg connections for a chunk that only records: no complaint among its events (recordEmailActivity). */
  pool: SqlPool;
  logger: Logger;
  nudgeOutbox: () => void;
  contactsChanged: ContactsChanged;
  /** Tests that share a broker with a running contacts service use a group of their own. */
  groupId?: string;
  fromBeginning?: boolean;
  /** Messages per transaction. */
  chunkSize?: number;
  partitionsConsumedConcurrently?: number;
}): EventConsumer {
  const { db, logger } = deps;
  const groupId = deps.groupId ?? emailActivityGroupId;
  const chunkSize = deps.chunkSize ?? 1_000;
  const tracer = trace.getTracer("herald-kafka");

  function readMessage(topic: string, partition: number, message: KafkaMessage): EmailActivityRecord | undefined {
    if (!message.value) return undefined;
    const receivedAt = new Date(Number(message.timestamp) || Date.now());
    let envelope: EventEnvelope;
    try {
      envelope = decodeEnvelope(message.value);
    } catch (error) {
      logger.warn({ err: error, topic, partition, offset: message.offset }, "skipping a message that is not an event envelope");
      return undefined;
    }
    const reading = readEmailActivity(envelope, receivedAt);
    if (reading.kind === "malformed") {
      logger.warn(
        { topic, partition, offset: message.offset, eventId: envelope.eventId, type: envelope.type, reason: reading.reason },
        "skipping a malformed email-activity event",
      );
    }
    return reading.kind === "record" ? reading.record : undefined;
  }

  /** Unsubscribes the contacts that complained and were subscribed; the number changed. */
  async function unsubscribeComplainers(tx: Tx, complaints: RecordedEmailActivity[], records: Map<string, EmailActivityRecord>, now: Date) {
    const byProject = new Map<string, Map<string, string>>();
    for (const complaint of complaints) {
      const contacts = byProject.get(complaint.projectId) ?? new Map<string, string>();
      if (!contacts.has(complaint.contactId)) contacts.set(complaint.contactId, String(records.get(complaint.id)?.data.emailId ?? ""));
      byProject.set(complaint.projectId, contacts);
    }
    let changed = 0;
    for (const [projectId, contacts] of byProject) {
      const unsubscribed = await setSubscribed(tx, projectId, [...contacts.keys()].sort(), false, now);
      await insertContactEvents(
        tx,
        unsubscribed.map((contact) => ({
          ...pendingContactEvent({
            id: randomUUID(),
            name: subscriptionEventName(false),
            projectId,
            contactEmail: contact.email,
            data: { reason: "complaint", emailId: contacts.get(contact.id) ?? "" },
            occurredAt: now,
          }),
          contactId: contact.id,
        })),
      );
      changed += unsubscribed.length;
    }
    return changed;
  }

  async function applyChunk(topic: string, partition: number, messages: KafkaMessage[]): Promise<void> {
    const records = new Map<string, EmailActivityRecord>();
    const links: Link[] = [];
    const parents: Context[] = [];
    for (const message of messages) {
      const record = readMessage(topic, partition, message);
      if (!record || records.has(record.id)) continue;
      records.set(record.id, record);
      const parent = traceContextOf(message.headers);
      const spanContext = trace.getSpanContext(parent);
      if (spanContext) {
        links.push({ context: spanContext });
        parents.push(parent);
      }
    }
    if (records.size === 0) return;
    const now = new Date();
    const activity = [...records.values()];
    const { recorded, unsubscribed } = await tracer.startActiveSpan(
      `${topic} process`,
      { kind: SpanKind.CONSUMER, links, attributes: { "messaging.system": "kafka", "messaging.batch.message_count": messages.length } },
      context.active(),
      async (span) => {
        // The chunk's span links the events' traces; each event's own trace also gets a span of its recording, so
        // that a send's trace reaches the timeline (an event is recorded when its chunk commits).
        const eventSpans = parents.map((parent) =>
          tracer.startSpan(
            `${topic} process`,
            { kind: SpanKind.CONSUMER, links: [{ context: span.spanContext() }], attributes: { "messaging.system": "kafka" } },
            parent,
          ),
        );
        try {
          // Nearly every chunk: one statement, which is its own transaction.
          if (!activity.some((record) => record.name === complaintEventName)) {
            return { recorded: await recordEmailActivity(deps.pool, activity), unsubscribed: 0 };
          }
          return await db.$transaction(
            async (tx) => {
              const recorded = await recordEmailActivity(tx, activity);
              const complaints = recorded.filter((event) => event.name === complaintEventName);
              const unsubscribed = complaints.length === 0 ? 0 : await unsubscribeComplainers(tx, complaints, records, now);
              return { recorded, unsubscribed };
            },
            { maxWait: 10_000, timeout: 60_000 },
          );
        } finally {
          for (const eventSpan of eventSpans) eventSpan.end();
          span.end();
        }
      },
    );
    if (unsubscribed > 0) deps.nudgeOutbox();
    const changed = new Map<string, Set<string>>();
    for (const event of recorded) changed.set(event.projectId, (changed.get(event.projectId) ?? new Set()).add(event.contactId));
    for (const [projectId, contactIds] of changed) deps.contactsChanged(projectId, [...contactIds]);
    if (recorded.length < records.size) {
      logger.debug({ topic, partition, skipped: records.size - recorded.length }, "email activity of unknown contacts or already recorded");
    }
  }

  async function run(consumer: Consumer): Promise<void> {
    const commits = pacedCommits(consumer, { logger, groupId });
    await consumer.connect();
    await consumer.subscribe({ topics: [topics.emailActivity], fromBeginning: deps.fromBeginning ?? false });
    await consumer.run({
      eachBatchAutoResolve: false,
      autoCommit: false,
      partitionsConsumedConcurrently: deps.partitionsConsumedConcurrently ?? 3,
      eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
        for (let start = 0; start < batch.messages.length; start += chunkSize) {
          if (!isRunning() || isStale()) return;
          const chunk = batch.messages.slice(start, start + chunkSize);
          await applyChunk(batch.topic, batch.partition, chunk);
          const last = chunk.at(-1);
          if (last) {
            resolveOffset(last.offset);
            commits.consumed(batch.topic, batch.partition, last.offset);
          }
          await heartbeat();
        }
      },
    });
  }

  return managedConsumer({
    // The broker holds a fetch up to half a second to fill it: while mail is sent each chunk then carries many
    // events instead of the few a fetch answered at once would, a statement and a fetch fewer each. The timeline
    // shows an email's activity that much later, which no reader of it notices.
    create: () => deps.kafka.consumer({ groupId, retry: { retries: 10 }, minBytes: 64 * 1024, maxWaitTimeInMs: 500 }),
    run,
    logger,
    groupId,
    what: "email-activity consumer",
  });
}
