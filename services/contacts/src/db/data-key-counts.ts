import type { JsonObject } from "../domain/contact-data.js";
import type { Reader } from "./client.js";

/**
 * How many top-level keys the contact's data holds now, and would hold after the patch
 * (`(data || set) - remove`, as the upsert computes it); a contact not yet created has none.
 */
export async function contactKeyCounts(
  db: Reader,
  projectId: string,
  email: string,
  patch: { set: JsonObject; remove: string[] },
): Promise<{ before: number; after: number }> {
  const set = JSON.stringify(patch.set);
  const [row] = await db.$queryRaw<Array<{ before: number; after: number }>>`
    SELECT (SELECT count(*) FROM jsonb_object_keys(c.data))::int AS before,
           (SELECT count(*) FROM jsonb_object_keys((c.data || ${set}::jsonb) - ${patch.remove}::text[]))::int AS after
    FROM contacts c WHERE c.project_id = ${projectId}::uuid AND c.email = ${email}`;
  return row ?? { before: 0, after: Object.keys(patch.set).length };
}

/** How many fields the project has registered, and how many of `keys` are among them. */
export async function projectFieldCounts(db: Reader, projectId: string, keys: string[]): Promise<{ registered: number; known: number }> {
  const [row] = await db.$queryRaw<Array<{ registered: number; known: number }>>`
    SELECT count(*)::int AS registered, (count(*) FILTER (WHERE key = ANY(${keys}::text[])))::int AS known
    FROM contact_fields WHERE project_id = ${projectId}::uuid`;
  return row ?? { registered: 0, known: 0 };
}
