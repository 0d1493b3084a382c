import { create } from "@bufbuild/protobuf";
import { createEnvelope, outboxRowOf, topics } from "@herald/kafka";
import { ContactEventSchema } from "@herald/proto/herald/events/v1/contact_event_pb";
import type { JsonObject } from "../domain/contact-data.js";

/** What produces herald.contact-events.v1 envelopes. */
export const eventSource = "contacts";

export const contactEventsTopic = topics.contactEvents;

/**
 * An event record and its envelope, ready to be written in the transaction of the
 * change. The envelope is encoded without its contact id, because on the upsert paths
 * the database assigns the id in the very statement that writes the outbox row;
 * `contactIdField` completes it there (or in `withContactId` where the id is known).
 */
export interface PendingContactEvent {
  id: string;
  name: string;
  projectId: string;
  data: JsonObject;
  occurredAt: Date;
  /** EventEnvelope bytes with contact_id unset. */
  envelopeWithoutContact: Uint8Array;
  /** The Kafka headers: the event type and the current trace context. */
  headers: string;
}

export function pendingContactEvent(event: {
  id: string;
  name: string;
  projectId: string;
  contactEmail: string;
  data: JsonObject;
  occurredAt: Date;
}): PendingContactEvent {
  const envelope = createEnvelope({
    eventId: event.id,
    type: event.name,
    projectId: event.projectId,
    source: eventSource,
    occurredAt: event.occurredAt,
    payloadSchema: ContactEventSchema,
    payload: create(ContactEventSchema, { eventId: event.id, contactEmail: event.contactEmail, data: event.data }),
  });
  // The row @herald/kafka's writeOutboxEvent writes, so the relay treats both alike; the contact id comes in SQL.
  const row = outboxRowOf(contactEventsTopic, envelope);
  return { ...event, envelopeWithoutContact: row.payload, headers: row.headers };
}

/**
 * The encoded EventEnvelope field 4 (contact_id) for a uuid: tag 0x22 (field 4,
 * length-delimited), length 36, then the id's text. Protobuf decoders accept fields
 * in any order, so appending it to an envelope encoded without a contact id gives
 * the envelope with it; the SQL writers append the same bytes in the database.
 */
export const contactIdFieldTag = Uint8Array.of(0x22, 36);

export function withContactId(envelopeWithoutContact: Uint8Array, contactId: string): Uint8Array {
  const id = new TextEncoder().encode(contactId);
  if (id.length !== 36) throw new Error(`a contact id is a uuid, not ${JSON.stringify(contactId)}`);
  const bytes = new Uint8Array(envelopeWithoutContact.length + contactIdFieldTag.length + id.length);
  bytes.set(envelopeWithoutContact);
  bytes.set(contactIdFieldTag, envelopeWithoutContact.length);
  bytes.set(id, envelopeWithoutContact.length + contactIdFieldTag.length);
  return bytes;
}
