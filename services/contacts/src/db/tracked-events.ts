import { contactEventsTopic, contactIdFieldTag, type PendingContactEvent } from "../events/contact-event-outbox.js";
import { queryRows, type SqlPool } from "./client.js";
import { type ContactBatchWrite, contactBatchOf, perWrite, registerFieldsOf } from "./contact-batch.js";
import { Prisma } from "./generated/client.js";

/** One tracked event whose call left the contact's subscription alone. */
export interface TrackedEventWrite extends ContactBatchWrite {
  event: PendingContactEvent;
}

export interface TrackedEventWritten {
  contactId: string;
  created: boolean;
}

/**
 * Records a batch of tracked events in ONE statement, whatever the number: each
 * contact is created or patched once (the patches of several events of one contact
 * composed in order), every event gets its own record and outbox row (in the order
 * of the batch, so per-contact order holds on Kafka), and new keys are registered.
 * New contacts are subscribed (no event in the batch gave a state). Contacts are
 * written in (project, email) order, so that two batches lock shared contacts in the
 * same order. The results follow the batch's order; of several events of a contact
 * the batch created, the first one reports it created.
 *
 * This is what makes /v1/track cheap under load: a statement and a commit cost far
 * more than the rows they write, and concurrent calls share them here.
 *
 * The contacts trigger writes each created or changed contact's contact.created or contact.updated in
 * this same statement (events/contact-change-outbox.ts); a contact whose data the call left as it was gets none.
 */
export async function recordTrackedEvents(pool: SqlPool, writes: TrackedEventWrite[], now: Date): Promise<TrackedEventWritten[]> {
  const { contacts, newFields } = contactBatchOf(writes);
  const events = writes.map((write) => write.event);
  const rows = await queryRows<{ projectId: string; email: string; id: string; created: boolean }>(
    pool,
    Prisma.sql`
    WITH input AS (
      SELECT * FROM unnest(
        ${contacts.map((contact) => contact.first.projectId)}::uuid[],
        ${contacts.map((contact) => contact.first.email)}::text[],
        ${contacts.map((contact) => JSON.stringify(contact.set))}::jsonb[],
        ${contacts.map((contact) => JSON.stringify(contact.remove))}::jsonb[]
      ) AS i(project_id, email, set, remove)
    ),
    upserted AS (
      INSERT INTO contacts AS c (project_id, email, subscribed, data, created_at, updated_at)
      SELECT i.project_id, i.email, true, i.set, ${now}, ${now} FROM input i ORDER BY i.project_id, i.email COLLATE "C"
      ON CONFLICT (project_id, email) DO UPDATE SET
        data = (c.data || EXCLUDED.data) - ARRAY(
          SELECT jsonb_array_elements_text(i.remove) FROM input i WHERE i.project_id = EXCLUDED.project_id AND i.email = EXCLUDED.email
        ),
        updated_at = EXCLUDED.updated_at
      RETURNING c.id, c.project_id, c.email, (c.xmax = 0) AS created
    ),
    sent AS (
      SELECT e.*, u.id AS contact_id FROM unnest(
        ${events.map((event) => event.id)}::uuid[],
        ${events.map((event) => event.projectId)}::uuid[],
        ${writes.map((write) => write.email)}::text[],
        ${events.map((event) => event.name)}::text[],
        ${events.map((event) => JSON.stringify(event.data))}::jsonb[],
        ${events.map((event) => event.occurredAt.toISOString())}::timestamptz[],
        ${events.map((event) => Buffer.from(event.envelopeWithoutContact).toString("base64"))}::text[],
        ${events.map((event) => event.headers)}::jsonb[]
      ) WITH ORDINALITY AS e(id, project_id, email, name, data, occurred_at, envelope, headers, position)
      JOIN upserted u ON u.project_id = e.project_id AND u.email = e.email
    ),
    tracked AS (
      INSERT INTO events (id, project_id, contact_id, name, data, created_at)
      SELECT id, project_id, contact_id, name, data, occurred_at FROM sent ORDER BY position
    ),
    outbox AS (
      INSERT INTO outbox_events (event_id, topic, key, payload, headers)
      SELECT id, ${contactEventsTopic}, contact_id::text,
        decode(envelope, 'base64') || ${contactIdFieldTag}::bytea || convert_to(contact_id::text, 'UTF8'), headers
      FROM sent ORDER BY position
    ),
    registered AS (
      ${registerFieldsOf(newFields)}
    )
    SELECT project_id::text AS "projectId", email, id::text AS id, created FROM upserted`,
  );
  return perWrite(writes, rows, (_, row, created) => ({ contactId: row.id, created }));
}
