/**
 * A service's memory of the contacts erased lately (its `erased_contacts` table: project, SHA-256 digest of the contact
 * id, time), for the facts about a contact that reach it after its contact.deleted. They travel on other topics, so
 * nothing orders the two (docs/decisions.md "Erasing a contact").
 */

/** What these statements need of a Prisma client or transaction. */
export interface RawSqlClient {
  $executeRawUnsafe(query: string, ...values: unknown[]): PromiseLike<number>;
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): PromiseLike<T>;
}

/** How long an erasure is remembered: a late fact comes within the consumers' lag, which is seconds, not weeks. */
const rememberedDays = 30;

/** The advisory lock that orders an erasure and the handling of the same project's facts. */
const lockOf = (namespace: string) => `hashtext('${namespace}.contact-erasure:' || p)`;

/**
 * Remembers that a contact was erased, by a digest of its id (not the id, which the erasure removes everywhere). Takes
 * the project's erasure lock in exclusive mode first, so that a transaction handling the project's facts now commits
 * before the caller's erasure goes on and sees what it wrote. Forgets the project's erasures older than the window.
 * `namespace` names the service's lock (its schema).
 */
export async function markErasedContact(tx: RawSqlClient, namespace: string, projectId: string, contactId: string): Promise<void> {
  await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(${lockOf(namespace)}) FROM (SELECT $1::text AS p) AS project`, projectId);
  await tx.$executeRawUnsafe(
    `INSERT INTO erased_contacts (project_id, contact_digest) VALUES ($1::uuid, sha256(convert_to($2, 'UTF8'))) ON CONFLICT DO NOTHING`,
    projectId,
    contactId,
  );
  await tx.$executeRawUnsafe(
    `DELETE FROM erased_contacts WHERE project_id = $1::uuid AND erased_at < now() - $2::int * interval '1 day'`,
    projectId,
    rememberedDays,
  );
}

/**
 * Which of these (project, contact) pairs name an erased contact, as "project contact" strings. Takes the projects'
 * erasure locks in shared mode first, so that an erasure of one of them either committed before (and is found here) or
 * waits for the caller's transaction to commit (and finds what it wrote).
 */
export async function erasedContactsAmong(
  tx: RawSqlClient,
  namespace: string,
  pairs: ReadonlyArray<{ projectId: string; contactId: string }>,
): Promise<Set<string>> {
  if (pairs.length === 0) return new Set();
  const projects = [...new Set(pairs.map((pair) => pair.projectId))].sort();
  await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock_shared(${lockOf(namespace)}) FROM unnest($1::text[]) AS p`, projects);
  const rows = await tx.$queryRawUnsafe<Array<{ project_id: string; contact_id: string }>>(
    `SELECT DISTINCT c.project_id::text AS project_id, c.contact_id
     FROM unnest($1::uuid[], $2::text[]) AS c(project_id, contact_id)
     JOIN erased_contacts e ON e.project_id = c.project_id AND e.contact_digest = sha256(convert_to(c.contact_id, 'UTF8'))`,
    pairs.map((pair) => pair.projectId),
    pairs.map((pair) => pair.contactId),
  );
  return new Set(rows.map((row) => `${row.project_id} ${row.contact_id}`));
}

/** Forgets a wiped project's erasures: a reset or a deletion leaves no contact of it to be named by a later fact. */
export async function forgetProjectErasures(tx: RawSqlClient, projectId: string): Promise<void> {
  await tx.$executeRawUnsafe("DELETE FROM erased_contacts WHERE project_id = $1::uuid", projectId);
}
