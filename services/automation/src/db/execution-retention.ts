import type { Db } from "./client.js";

/** Every workflow that has executions: a loose index scan of (workflow_id, started_at), one probe per workflow. */
export async function workflowsWithExecutions(db: Db): Promise<string[]> {
  const rows = await db.$queryRaw<Array<{ workflowId: string }>>`
    WITH RECURSIVE holders AS (
      SELECT (SELECT workflow_id FROM workflow_executions ORDER BY workflow_id LIMIT 1) AS workflow_id
      UNION ALL
      SELECT (SELECT e.workflow_id FROM workflow_executions e WHERE e.workflow_id > h.workflow_id ORDER BY e.workflow_id LIMIT 1)
      FROM holders h WHERE h.workflow_id IS NOT NULL
    )
    SELECT workflow_id::text AS "workflowId" FROM holders WHERE workflow_id IS NOT NULL`;
  return rows.map((row) => row.workflowId);
}

/**
 * Deletes up to `limit` of a workflow's executions that finished before `before` (their step runs go with them, by
 * the foreign key): one short statement, repeated by the caller. A live execution is never touched, however old,
 * and the workflow's entrants stay, so that a contact that ran once without re-entry still does not run again.
 */
export async function expireExecutions(db: Db, workflowId: string, before: Date, limit: number): Promise<number> {
  return db.$executeRaw`
    DELETE FROM workflow_executions WHERE (project_id, id) IN (
      SELECT project_id, id FROM workflow_executions
      WHERE workflow_id = ${workflowId}::uuid AND started_at < ${before} AND finished_at < ${before}
      LIMIT ${limit}
    )`;
}
