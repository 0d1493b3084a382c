import type { JsonObject } from "../domain/contact-data.js";
import type { Tx } from "./client.js";

/** One piece of email activity to show on a contact's timeline. */
export interface EmailActivityRecord {
  /** The envelope's event id (or a uuid derived from it): a redelivery carries the same one. */
  id: string;
  projectId: string;
  contactId: string;
  /** The envelope's type: email.sent, email.open, … */
  name: string;
  data: JsonObject;
  occurredAt: Date;
}

export interface RecordedEmailActivity {
  id: string;
  projectId: string;
  contactId: string;
  name: string;
}

/**
 * Records email activity as events of the contacts it names, in ONE statement
 * whatever the number, and answers those it recorded. An event lands only on a
 * contact of the event's own project that still exists (the contact row is key-share
 * locked, so a delete racing this statement either waits or is seen as done), and
 * an event already recorded (its id and time: a redelivery carries both) is skipped: the record is the proof of processing,
 * so a redelivered envelope is recorded once without a processed_events row per
 * email.
 */
export async function recordEmailActivity(tx: Tx, records: EmailActivityRecord[]): Promise<RecordedEmailActivity[]> {
  if (records.length === 0) return [];
  return tx.$queryRaw<RecordedEmailActivity[]>`
    WITH input AS (
      SELECT * FROM unnest(
        ${records.map((record) => record.id)}::uuid[],
        ${records.map((record) => record.projectId)}::uuid[],
        ${records.map((record) => record.contactId)}::uuid[],
        ${records.map((record) => record.name)}::text[],
        ${records.map((record) => JSON.stringify(record.data))}::jsonb[],
        ${records.map((record) => record.occurredAt.toISOString())}::timestamptz[]
      ) WITH ORDINALITY AS i(id, project_id, contact_id, name, data, created_at, position)
    ),
    alive AS (
      SELECT i.* FROM input i JOIN contacts c ON c.id = i.contact_id AND c.project_id = i.project_id
      ORDER BY i.position
      FOR KEY SHARE OF c
    )
    INSERT INTO events (id, project_id, contact_id, name, data, created_at)
    SELECT id, project_id, contact_id, name, data, created_at FROM alive ORDER BY position
    ON CONFLICT (project_id, created_at, id) DO NOTHING
    RETURNING id::text AS id, project_id::text AS "projectId", contact_id::text AS "contactId", name`;
}
