import { applyDataPatch, composeDataPatches, type DataPatch } from "../domain/contact-data.js";
import type { FieldType } from "../domain/field-type.js";
import { queryRows, type SqlPool } from "./client.js";
import { inFieldLockOrder } from "./contact-fields.js";
import { type ContactRow, contactColumns } from "./contacts.js";
import { Prisma } from "./generated/client.js";
import { jsonObjectOf } from "./json.js";

/** One create-or-patch that leaves the subscription alone and records no event: most of /v1/send's and POST /contacts'. */
export interface PlainContactUpsert {
  projectId: string;
  /** Normalised and valid. */
  email: string;
  /** A new contact's state (the source's default). */
  defaultSubscribed: boolean;
  patch: DataPatch;
  /** Keys of `patch.set` the registry may not know yet, with the type their value implies. */
  newFields: Array<{ key: string; type: FieldType }>;
}

export interface PlainContactUpserted {
  contact: ContactRow;
  created: boolean;
}

// Project ids compared as Postgres writes uuids: lower case.
const contactKey = (projectId: string, email: string) => `${projectId.toLowerCase()} ${email}`;

/**
 * Creates or patches the contacts of a batch in ONE statement, as recordTrackedEvents does
 * for /v1/track: each contact once (the patches of several calls for one contact composed
 * in order, the first call's default state for a new one), in (project, email) order so
 * that concurrent batches lock shared contacts in the same order, and new keys registered.
 * Each call answers the contact as the statement left it, with the call's own values over
 * its data (two sends to one contact in a batch each render their own `order`); of several
 * calls for a contact the batch created, the first reports it created. New keys are
 * registered in (project, key) order, for the same reason as the contacts.
 */
export async function upsertPlainContacts(pool: SqlPool, writes: PlainContactUpsert[], now: Date): Promise<PlainContactUpserted[]> {
  const contacts = new Map<string, { projectId: string; email: string; defaultSubscribed: boolean; patches: DataPatch[] }>();
  for (const write of writes) {
    const key = contactKey(write.projectId, write.email);
    const contact = contacts.get(key) ?? {
      projectId: write.projectId,
      email: write.email,
      defaultSubscribed: write.defaultSubscribed,
      patches: [],
    };
    contact.patches.push(write.patch);
    contacts.set(key, contact);
  }
  const inputs = [...contacts.values()].map((contact) => ({ ...contact, ...composeDataPatches(contact.patches) }));
  const fields = new Map<string, { projectId: string; key: string; type: FieldType }>();
  for (const write of writes) {
    for (const field of write.newFields) {
      const key = contactKey(write.projectId, field.key);
      if (!fields.has(key)) fields.set(key, { projectId: write.projectId, ...field });
    }
  }
  const newFields = inFieldLockOrder([...fields.values()]);
  const rows = await queryRows<ContactRow & { projectId: string; created: boolean }>(
    pool,
    Prisma.sql`
    WITH input AS (
      SELECT * FROM unnest(
        ${inputs.map((input) => input.projectId)}::uuid[],
        ${inputs.map((input) => input.email)}::text[],
        ${inputs.map((input) => input.defaultSubscribed)}::boolean[],
        ${inputs.map((input) => JSON.stringify(input.set))}::jsonb[],
        ${inputs.map((input) => JSON.stringify(input.remove))}::jsonb[]
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
      INSERT INTO contact_fields (project_id, key, type)
      SELECT * FROM unnest(
        ${newFields.map((field) => field.projectId)}::uuid[],
        ${newFields.map((field) => field.key)}::text[],
        ${newFields.map((field) => field.type)}::text[]
      )
      ON CONFLICT (project_id, key) DO NOTHING
    )
    SELECT * FROM upserted`,
  );
  const written = new Map(rows.map(({ projectId, created, ...contact }) => [contactKey(projectId, contact.email), { contact, created }]));
  const reported = new Set<string>();
  return writes.map((write) => {
    const key = contactKey(write.projectId, write.email);
    const found = written.get(key);
    if (!found) throw new Error(`the batch wrote no contact for ${write.email}`);
    const created = found.created && !reported.has(key);
    reported.add(key);
    return { contact: { ...found.contact, data: applyDataPatch(jsonObjectOf(found.contact.data), write.patch) }, created };
  });
}
