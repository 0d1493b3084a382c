import { applyDataPatch } from "../domain/contact-data.js";
import { queryRows, type SqlPool } from "./client.js";
import { type ContactBatchWrite, contactBatchOf, perWrite, registerFieldsOf } from "./contact-batch.js";
import { type ContactRow, contactColumns } from "./contacts.js";
import { Prisma } from "./generated/client.js";
import { jsonObjectOf } from "./json.js";

/** One create-or-patch that leaves the subscription alone and records no event: most of /v1/send's and POST /contacts'. */
export interface PlainContactUpsert extends ContactBatchWrite {
  /** A new contact's state (the source's default). */
  defaultSubscribed: boolean;
}

export interface PlainContactUpserted {
  contact: ContactRow;
  created: boolean;
}

/**
 * Creates or patches the contacts of a batch in ONE statement, as recordTrackedEvents does
 * for /v1/track: each contact once (the patches of several calls for one contact composed
 * in order, the first call's default state for a new one), in (project, email) order so
 * that concurrent batches lock shared contacts in the same order, and new keys registered.
 * Each call answers the contact as the statement left it, with the call's own values over
 * its data (two sends to one contact in a batch each render their own `order`); of several
 * calls for a contact the batch created, the first reports it created. New keys are
 * registered in (project, key) order, for the same reason as the contacts.
 * The contacts trigger writes each created or changed contact's contact.created or contact.updated in
 * this same statement (events/contact-change-outbox.ts); a contact whose data the call left as it was gets none.
 */
export async function upsertPlainContacts(pool: SqlPool, writes: PlainContactUpsert[], now: Date): Promise<PlainContactUpserted[]> {
  const { contacts, newFields } = contactBatchOf(writes);
  const rows = await queryRows<ContactRow & { projectId: string; created: boolean }>(
    pool,
    Prisma.sql`
    WITH input AS (
      SELECT * FROM unnest(
        ${contacts.map((contact) => contact.first.projectId)}::uuid[],
        ${contacts.map((contact) => contact.first.email)}::text[],
        ${contacts.map((contact) => contact.first.defaultSubscribed)}::boolean[],
        ${contacts.map((contact) => JSON.stringify(contact.set))}::jsonb[],
        ${contacts.map((contact) => JSON.stringify(contact.remove))}::jsonb[]
      ) AS i(project_id, email, subscribed, set, remove)
    ),
    upserted AS (
      INSERT INTO contacts AS c (project_id, email, subscribed, data, created_at, updated_at)
      SELECT i.project_id, i.email, i.subscribed, i.set, ${now}, ${now} FROM input i ORDER BY i.project_id, i.email COLLATE "C"
      ON CONFLICT (project_id, email) DO UPDATE SET
        data = (c.data || EXCLUDED.data) - ARRAY(
          SELECT jsonb_array_elements_text(i.remove) FROM input i WHERE i.project_id = EXCLUDED.project_id AND i.email = EXCLUDED.email
        ),
        updated_at = EXCLUDED.updated_at
      RETURNING ${contactColumns("c")}, c.project_id::text AS "projectId", (c.xmax = 0) AS created
    ),
    registered AS (
      ${registerFieldsOf(newFields)}
    )
    SELECT * FROM upserted`,
  );
  return perWrite(writes, rows, (write, { projectId: _, created: __, ...contact }, created) => ({
    contact: { ...contact, data: applyDataPatch(jsonObjectOf(contact.data), write.patch) },
    created,
  }));
}
