import { withoutContactChanges } from "../events/contact-change-outbox.js";
import type { Db, Reader } from "./client.js";
import { Prisma } from "./generated/client.js";

export interface ProjectWipeRow {
  id: string;
  projectId: string;
  cutoff: Date | null;
}

/** Records that a project's data must go; the job worker wipes it in batches. */
export async function requestProjectWipe(db: Reader, wipe: { projectId: string; reason: string; cutoff: Date | null }): Promise<void> {
  await db.projectWipe.create({ data: wipe });
}

/** The oldest wipe nobody holds, leased to `owner` (a wipe is idempotent, the lease only spares duplicate work). */
export async function claimProjectWipe(db: Reader, owner: string, leaseMs: number): Promise<ProjectWipeRow | undefined> {
  const [wipe] = await db.$queryRaw<ProjectWipeRow[]>`
    UPDATE project_wipes SET lease_owner = ${owner}, lease_expires_at = now() + ${leaseMs} * interval '1 millisecond'
    WHERE id = (
      SELECT id FROM project_wipes
      WHERE lease_expires_at IS NULL OR lease_expires_at < now()
      ORDER BY created_at LIMIT 1
      FOR UPDATE SKIP LOCKED
    )
    RETURNING id::text AS id, project_id::text AS "projectId", cutoff`;
  return wipe;
}

export async function extendWipeLease(db: Reader, id: string, owner: string, leaseMs: number): Promise<boolean> {
  return (
    (await db.$executeRaw`
      UPDATE project_wipes SET lease_expires_at = now() + ${leaseMs} * interval '1 millisecond'
      WHERE id = ${id}::uuid AND lease_owner = ${owner}`) === 1
  );
}

export async function releaseWipeLease(db: Reader, id: string, owner: string): Promise<void> {
  await db.$executeRaw`UPDATE project_wipes SET lease_expires_at = now() WHERE id = ${id}::uuid AND lease_owner = ${owner}`;
}

export async function finishProjectWipe(db: Reader, id: string): Promise<void> {
  await db.$executeRaw`DELETE FROM project_wipes WHERE id = ${id}::uuid`;
}

/**
 * The project's tables in wiping order: jobs first, so that a worker busy with one
 * stops at its next batch; then events and memberships before contacts, so that no
 * batch of contacts cascades into an unbounded delete of their rows.
 */
export const wipedTables = ["import_jobs", "bulk_jobs", "events", "segment_members", "contacts", "segments", "contact_fields"] as const;

const keyOf: Record<WipedTable, string> = {
  import_jobs: "id",
  bulk_jobs: "id",
  events: "id, created_at",
  segment_members: "project_id, segment_id, contact_id",
  contacts: "id",
  segments: "id",
  contact_fields: "project_id, key",
};

export type WipedTable = (typeof wipedTables)[number];

/**
 * Deletes up to `limit` rows of the project created no later than the cutoff (all of
 * them without one): one short statement, repeated by the wiper until none is left.
 * A wipe is not the deletion of contacts one by one: contacts go without a
 * contact.deleted each (the trigger of herald.contact-changes.v1 is told so for the
 * transaction), since the project's own lifecycle event says it all.
 */
export async function wipeBatch(db: Db, table: WipedTable, wipe: ProjectWipeRow, limit: number): Promise<number> {
  const name = Prisma.raw(table);
  const key = Prisma.raw(keyOf[table]);
  const cutoff = wipe.cutoff ? Prisma.sql`AND created_at <= ${wipe.cutoff}` : Prisma.empty;
  const deleteBatch = (client: Reader) => client.$executeRaw`
    DELETE FROM ${name} WHERE (${key}) IN (
      SELECT ${key} FROM ${name} WHERE project_id = ${wipe.projectId}::uuid ${cutoff} LIMIT ${limit}
    )`;
  if (table !== "contacts") return deleteBatch(db);
  return db.$transaction(async (tx) => {
    await withoutContactChanges(tx);
    return deleteBatch(tx);
  });
}
