import { contactEventsTopic, type PendingContactEvent, withContactId } from "../events/contact-event-outbox.js";
import type { Tx } from "./client.js";

/**
 * Records events on known contacts and their outbox rows, two statements whatever
 * their number (bulk jobs write hundreds at once). Payloads travel as base64 text:
 * an array of binary values is not something every driver path passes intact.
 */
export async function insertContactEvents(tx: Tx, events: Array<PendingContactEvent & { contactId: string }>): Promise<void> {
  if (events.length === 0) return;
  const ids = events.map((event) => event.id);
  await tx.$executeRaw`
    INSERT INTO events (id, project_id, contact_id, name, data, created_at)
    SELECT * FROM unnest(
      ${ids}::uuid[],
      ${events.map((event) => event.projectId)}::uuid[],
      ${events.map((event) => event.contactId)}::uuid[],
      ${events.map((event) => event.name)}::text[],
      ${events.map((event) => JSON.stringify(event.data))}::jsonb[],
      ${events.map((event) => event.occurredAt.toISOString())}::timestamptz[]
    )`;
  await tx.$executeRaw`
    INSERT INTO outbox_events (event_id, topic, key, payload, headers)
    SELECT id, ${contactEventsTopic}, key, decode(payload, 'base64'), headers
    FROM unnest(
      ${ids}::uuid[],
      ${events.map((event) => event.contactId)}::text[],
      ${events.map((event) => Buffer.from(withContactId(event.envelopeWithoutContact, event.contactId)).toString("base64"))}::text[],
      ${events.map((event) => event.headers)}::jsonb[]
    ) AS e(id, key, payload, headers)`;
}
