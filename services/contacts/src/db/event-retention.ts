import type { Reader } from "./client.js";

/** A project's own window of tracked events, in days; undefined: the deployment's default. */
export async function projectEventsRetention(db: Reader, projectId: string): Promise<number | undefined> {
  const row = await db.projectRetention.findUnique({ where: { projectId } });
  return row?.eventsDays;
}

/** Sets a project's own window, or (undefined) returns it to the deployment's default. */
export async function setProjectEventsRetention(db: Reader, projectId: string, eventsDays: number | undefined): Promise<void> {
  if (eventsDays === undefined) {
    await db.projectRetention.deleteMany({ where: { projectId } });
    return;
  }
  await db.projectRetention.upsert({
    where: { projectId },
    create: { projectId, eventsDays },
    update: { eventsDays, updatedAt: new Date() },
  });
}

/**
 * Every project that holds events, with its own window when it has one: a loose index scan of the
 * (project_id, created_at, id) index, one probe per project, rather than a scan of the events.
 */
export async function projectsWithEvents(db: Reader): Promise<Array<{ projectId: string; eventsDays: number | null }>> {
  return db.$queryRaw`
    WITH RECURSIVE holders AS (
      SELECT (SELECT project_id FROM events ORDER BY project_id LIMIT 1) AS project_id
      UNION ALL
      SELECT (SELECT e.project_id FROM events e WHERE e.project_id > h.project_id ORDER BY e.project_id LIMIT 1) FROM holders h WHERE h.project_id IS NOT NULL
    )
    SELECT h.project_id::text AS "projectId", r.events_days AS "eventsDays"
    FROM holders h LEFT JOIN project_retention r ON r.project_id = h.project_id
    WHERE h.project_id IS NOT NULL`;
}

/** Deletes up to `limit` of a project's events older than `before`: one short statement, repeated by the caller. */
export async function expireProjectEvents(db: Reader, projectId: string, before: Date, limit: number): Promise<number> {
  return db.$executeRaw`
    DELETE FROM events WHERE (id, created_at) IN (
      SELECT id, created_at FROM events WHERE project_id = ${projectId}::uuid AND created_at < ${before} LIMIT ${limit}
    )`;
}
