import type { Db, Reader } from "./client.js";

/**
 * A project's contacts, or those subscribed or not, from the change rows the triggers of migration
 * 20261129030000_contact_counts append (model ContactCountDelta): exact, in the reader's snapshot, and a sum of
 * at most the rows written since the last fold instead of a count of every contact.
 */
export async function countProjectContacts(db: Reader, projectId: string, subscribed: boolean | undefined): Promise<number> {
  const [row] =
    subscribed === undefined
      ? await db.$queryRaw<Array<{ n: bigint | null }>>`
          SELECT sum(delta) AS n FROM contact_count_deltas WHERE project_id = ${projectId}::uuid`
      : await db.$queryRaw<Array<{ n: bigint | null }>>`
          SELECT sum(delta) AS n FROM contact_count_deltas WHERE project_id = ${projectId}::uuid AND subscribed = ${subscribed}`;
  return Number(row?.n ?? 0);
}

/** Projects folded per pass. */
export const foldBatch = 500;

/**
 * Replaces the change rows of up to `foldBatch` projects that have more than one per state by their sum (none
 * where it is 0, as after a wipe), in one statement: a concurrent fold in another replica waits on the rows this
 * one deletes and then skips them, so no change is summed twice. Answers how many projects it folded.
 */
export async function foldContactCounts(db: Db): Promise<number> {
  const [row] = await db.$queryRaw<Array<{ projects: bigint }>>`
    WITH due AS (
      SELECT project_id FROM contact_count_deltas GROUP BY project_id HAVING count(*) > 2 LIMIT ${foldBatch}
    ), gone AS (
      DELETE FROM contact_count_deltas WHERE project_id IN (SELECT project_id FROM due)
      RETURNING project_id, subscribed, delta
    ), kept AS (
      INSERT INTO contact_count_deltas (project_id, subscribed, delta)
      SELECT project_id, subscribed, sum(delta) FROM gone GROUP BY project_id, subscribed HAVING sum(delta) <> 0
    )
    SELECT count(*) AS projects FROM due`;
  return Number(row?.projects ?? 0);
}
