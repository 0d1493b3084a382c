import type pg from "pg";
import type { AddressHash } from "../domain/address-hash.js";

/** Suppressions hashed in one statement by hashUnhashedSuppressions. */
const hashBatch = 1_000;

/**
 * Gives every suppression written without a keyed hash (before the column existed, or by an older version during a
 * rolling upgrade) its hash, in batches in key order. A row whose hash another row of its project already holds (the
 * same address, suppressed again by an older version after its contact's erasure) is a duplicate and goes. Answers how
 * many rows were hashed. Run by delivery as it starts, before it serves.
 */
export async function hashUnhashedSuppressions(pool: pg.Pool, hashOf: AddressHash): Promise<number> {
  let hashed = 0;
  let after = { projectId: "00000000-0000-0000-0000-000000000000", id: "00000000-0000-0000-0000-000000000000" };
  for (;;) {
    const { rows } = await pool.query<{ projectId: string; id: string; email: string }>(
      `SELECT project_id::text AS "projectId", id::text AS id, email FROM suppressions
       WHERE (project_id, id) > ($1::uuid, $2::uuid) AND email_hash IS NULL AND email IS NOT NULL
       ORDER BY project_id, id LIMIT ${hashBatch}`,
      [after.projectId, after.id],
    );
    const last = rows.at(-1);
    if (!last) return hashed;
    const { rowCount } = await pool.query(
      `WITH v AS (SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::bytea[]) AS v(project_id, id, hash)),
       duplicates AS (
         DELETE FROM suppressions s USING v
         WHERE s.project_id = v.project_id AND s.id = v.id AND s.email_hash IS NULL
           AND EXISTS (SELECT 1 FROM suppressions t WHERE t.project_id = v.project_id AND t.email_hash = v.hash)
       )
       UPDATE suppressions s SET email_hash = v.hash FROM v
       WHERE s.project_id = v.project_id AND s.id = v.id AND s.email_hash IS NULL
         AND NOT EXISTS (SELECT 1 FROM suppressions t WHERE t.project_id = v.project_id AND t.email_hash = v.hash)`,
      [rows.map((row) => row.projectId), rows.map((row) => row.id), rows.map((row) => hashOf(row.email))],
    );
    hashed += rowCount ?? 0;
    after = { projectId: last.projectId, id: last.id };
  }
}
