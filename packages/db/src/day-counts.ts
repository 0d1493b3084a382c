import type { RawSqlClient } from "./erased-contacts.js";

/**
 * A table's rows counted per project, UTC day and key (an event's name, an activity's type) by its statement triggers,
 * so that a first page's total is a sum of a few hundred rows instead of a count of millions. The triggers append
 * changes to `<prefix>_count_deltas` (no row is updated, so writers of one project never queue on a counter); a fold
 * moves them into `<prefix>_counts`. Both change in the writer's or the fold's own transaction, so a sum of the two is
 * exact in the reader's snapshot. Migrations 2026112913xxxx_*_counts create them.
 */
export interface DayCounts {
  /** `event`: the tables event_counts and event_count_deltas. */
  prefix: string;
  /** The counted table, its time column (what the day is of), and the column the counts are kept by. */
  source: { table: string; time: string; key: string };
}

const dayMs = 86_400_000;

/** Deltas moved into the counts per fold statement. */
export const dayCountsFoldBatch = 5_000;

/**
 * The project's rows at or after `since`, of the given keys (all when omitted): the days after since's day from the
 * counts, and since's own day, which the window starts within, counted row by row (a day of one project's rows).
 */
export async function countSince(
  db: RawSqlClient,
  counts: DayCounts,
  projectId: string,
  since: Date,
  keys?: readonly string[],
): Promise<number> {
  const { prefix, source } = counts;
  const nextDay = new Date((Math.floor(since.getTime() / dayMs) + 1) * dayMs);
  const ofKeys = keys === undefined ? "" : ` AND ${source.key} = ANY($5::text[])`;
  const [row] = await db.$queryRawUnsafe<Array<{ n: bigint | number | string | null }>>(
    `SELECT (SELECT coalesce(sum(count), 0) FROM ${prefix}_counts WHERE project_id = $1::uuid AND day >= $3::date${ofKeys})
      + (SELECT coalesce(sum(delta), 0) FROM ${prefix}_count_deltas WHERE project_id = $1::uuid AND day >= $3::date${ofKeys})
      + (SELECT count(*) FROM ${source.table} WHERE project_id = $1::uuid AND ${source.time} >= $2 AND ${source.time} < $4${ofKeys}) AS n`,
    projectId,
    since,
    nextDay.toISOString().slice(0, 10),
    nextDay,
    ...(keys === undefined ? [] : [[...keys]]),
  );
  return Number(row?.n ?? 0);
}

/**
 * Moves up to `dayCountsFoldBatch` deltas into the counts in one statement, then deletes the counts that reached 0 (a
 * wiped project keeps no row; one that another fold moved off 0 meanwhile stays). A concurrent fold in another replica
 * skips the deltas this one locked, and both upsert the counts in one order, so neither counts a delta twice nor
 * deadlocks. Answers how many deltas it moved.
 */
export async function foldDayCounts(db: RawSqlClient, counts: DayCounts): Promise<number> {
  const { prefix, source } = counts;
  const key = source.key;
  const [moved] = await db.$queryRawUnsafe<Array<{ deltas: bigint | number; emptied: unknown }>>(
    `WITH batch AS (
       SELECT project_id, id FROM ${prefix}_count_deltas LIMIT ${dayCountsFoldBatch} FOR UPDATE SKIP LOCKED
     ), gone AS (
       DELETE FROM ${prefix}_count_deltas d USING batch b WHERE d.project_id = b.project_id AND d.id = b.id
       RETURNING d.project_id, d.day, d.${key}, d.delta
     ), kept AS (
       INSERT INTO ${prefix}_counts (project_id, day, ${key}, count)
       SELECT project_id, day, ${key}, sum(delta) FROM gone GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
       ON CONFLICT (project_id, day, ${key}) DO UPDATE SET count = ${prefix}_counts.count + excluded.count
       RETURNING project_id, day, ${key}, count
     )
     SELECT (SELECT count(*) FROM gone) AS deltas,
       (SELECT coalesce(json_agg(json_build_array(project_id, day, ${key})), '[]'::json) FROM kept WHERE count = 0) AS emptied`,
  );
  const emptied = (moved?.emptied ?? []) as Array<[string, string, string]>;
  if (emptied.length > 0) {
    await db.$executeRawUnsafe(
      `DELETE FROM ${prefix}_counts c USING json_array_elements($1::json) e
       WHERE c.project_id = (e->>0)::uuid AND c.day = (e->>1)::date AND c.${key} = e->>2 AND c.count = 0`,
      JSON.stringify(emptied),
    );
  }
  return Number(moved?.deltas ?? 0);
}

/** Forgets the counts of the days before `before`'s day: their rows are past every project's window, and gone. */
export async function forgetDayCountsBefore(db: RawSqlClient, counts: DayCounts, before: Date): Promise<void> {
  const day = new Date(Math.floor(before.getTime() / dayMs) * dayMs).toISOString().slice(0, 10);
  await db.$executeRawUnsafe(`DELETE FROM ${counts.prefix}_counts WHERE day < $1::date`, day);
  await db.$executeRawUnsafe(`DELETE FROM ${counts.prefix}_count_deltas WHERE day < $1::date`, day);
}
