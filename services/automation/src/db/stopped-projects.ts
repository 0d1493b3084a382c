import type { Tx } from "./client.js";
import { Prisma } from "./generated/client.js";

/** Records that a project's workflows must not run (project.disabled, project.deleted). */
export async function stopProject(tx: Tx, projectId: string, reason: string, at: Date): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO stopped_projects (project_id, reason, stopped_at) VALUES (${projectId}::uuid, ${reason}, ${at})
    ON CONFLICT (project_id) DO UPDATE SET reason = excluded.reason, stopped_at = excluded.stopped_at`;
}

/** The project's workflows may run again (project.enabled): runs held meanwhile are due at once. */
export async function resumeProject(tx: Tx, projectId: string): Promise<void> {
  await tx.$executeRaw`DELETE FROM stopped_projects WHERE project_id = ${projectId}::uuid`;
}

/**
 * The condition an engine statement adds to pass over a stopped project's rows, e.g.
 * `WHERE status = 'PENDING' AND ${projectRuns(Prisma.sql`r.project_id`)}` (qualified: unqualified, `project_id` would
 * name the list's own column): its steps, timers and
 * triggers wait, keeping their state, until project.enabled removes the row.
 */
export const projectRuns = (projectIdColumn: Prisma.Sql): Prisma.Sql =>
  // Step runs keep their project id as text; the list keeps uuids.
  Prisma.sql`NOT EXISTS (SELECT 1 FROM stopped_projects sp WHERE sp.project_id::text = ${projectIdColumn})`;

/** Whether the project's workflows are stopped: for a trigger, which starts no execution then. */
export async function isProjectStopped(db: Tx, projectId: string): Promise<boolean> {
  const rows = await db.$queryRaw<unknown[]>`SELECT 1 FROM stopped_projects WHERE project_id = ${projectId}::uuid`;
  return rows.length > 0;
}
