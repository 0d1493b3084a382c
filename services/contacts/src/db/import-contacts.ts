import type { JsonObject } from "../domain/contact-data.js";
import type { Tx } from "./client.js";

/**
 * Creates or merges one batch of imported contacts in one statement: new contacts
 * are subscribed (SPEC.md "CSV import rules" 5), existing ones keep their state and
 * get the row's columns merged into their data. Returns the ids it wrote and the emails it created;
 * `xmax = 0` is how Postgres tells an inserted row from one updated ON CONFLICT.
 * Rows go in email order so that two imports touching the same contacts lock them
 * in the same order and cannot deadlock.
 * The contacts trigger writes each created or changed contact's contact.created or contact.updated in
 * this same statement (events/contact-change-outbox.ts); a contact whose data the call left as it was gets none.
 */
export async function importContacts(
  tx: Tx,
  projectId: string,
  rows: Array<{ email: string; data: JsonObject }>,
  now: Date,
): Promise<{ ids: string[]; created: Set<string> }> {
  if (rows.length === 0) return { ids: [], created: new Set() };
  const sorted = [...rows].sort((a, b) => (a.email < b.email ? -1 : a.email > b.email ? 1 : 0));
  const written = await tx.$queryRaw<Array<{ id: string; email: string; created: boolean }>>`
    INSERT INTO contacts AS c (project_id, email, subscribed, data, created_at, updated_at)
    SELECT ${projectId}::uuid, r.email, true, r.data, ${now}, ${now}
    FROM unnest(${sorted.map((row) => row.email)}::text[], ${sorted.map((row) => JSON.stringify(row.data))}::jsonb[]) AS r(email, data)
    ON CONFLICT (project_id, email) DO UPDATE SET
      data = c.data || EXCLUDED.data,
      updated_at = CASE WHEN EXCLUDED.data = '{}'::jsonb THEN c.updated_at ELSE EXCLUDED.updated_at END
    RETURNING c.id::text AS id, c.email, (c.xmax = 0) AS created`;
  return { ids: written.map((row) => row.id), created: new Set(written.filter((row) => row.created).map((row) => row.email)) };
}
