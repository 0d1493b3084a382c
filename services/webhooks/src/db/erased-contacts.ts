import type { Tx } from "./messages.js";

/**
 * How long an erasure is remembered: a fact about the contact written before its erasure can reach the fan-out after
 * contact.deleted does (they travel on different topics), within the consumers' lag, which is seconds, not weeks.
 */
const rememberedDays = 30;

/** The advisory lock that orders an erasure and the fan-out of facts of the same project (see markErasedContact). */
const lockOf = "hashtext('webhooks.contact-erasure:' || p)";

/**
 * Remembers that a contact was erased, by a SHA-256 digest of its id (not the id itself, which the erasure removes
 * everywhere), so that a fact about it that comes later is queued to be redacted once delivered
 * (erasedContactsAmong). Takes the project's erasure lock in exclusive mode first: a fan-out of the project's facts
 * running now commits before this goes on, and the caller's erasure of messages then sees what it queued. Forgets the
 * project's erasures older than the window.
 */
export async function markErasedContact(tx: Tx, projectId: string, contactId: string): Promise<void> {
  await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(${lockOf}) FROM (SELECT $1::text AS p) AS project`, projectId);
  await tx.$executeRaw`
    INSERT INTO erased_contacts (project_id, contact_digest) VALUES (${projectId}::uuid, sha256(convert_to(${contactId}, 'UTF8')))
    ON CONFLICT DO NOTHING`;
  await tx.$executeRaw`
    DELETE FROM erased_contacts
    WHERE project_id = ${projectId}::uuid AND erased_at < now() - ${rememberedDays}::int * interval '1 day'`;
}

/**
 * Which of these (project, contact) pairs name an erased contact, as "project contact" strings. Takes the projects'
 * erasure locks in shared mode first, so that an erasure of one of them either committed before (and is found here) or
 * waits for the caller's transaction to commit (and finds its messages).
 */
export async function erasedContactsAmong(tx: Tx, pairs: ReadonlyArray<{ projectId: string; contactId: string }>): Promise<Set<string>> {
  if (pairs.length === 0) return new Set();
  const projects = [...new Set(pairs.map((pair) => pair.projectId))].sort();
  await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock_shared(${lockOf}) FROM unnest($1::text[]) AS p`, projects);
  const rows = await tx.$queryRaw<Array<{ project_id: string; contact_id: string }>>`
    SELECT DISTINCT c.project_id, c.contact_id
    FROM unnest(${pairs.map((pair) => pair.projectId)}::uuid[], ${pairs.map((pair) => pair.contactId)}::text[]) AS c(project_id, contact_id)
    JOIN erased_contacts e ON e.project_id = c.project_id AND e.contact_digest = sha256(convert_to(c.contact_id, 'UTF8'))`;
  return new Set(rows.map((row) => `${row.project_id} ${row.contact_id}`));
}

/** Forgets a wiped project's erasures: a reset or a deletion leaves no contact of it to be named by a later fact. */
export async function forgetProjectErasures(tx: Tx, projectId: string): Promise<void> {
  await tx.$executeRaw`DELETE FROM erased_contacts WHERE project_id = ${projectId}::uuid`;
}
