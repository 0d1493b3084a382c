import type { Tx } from "./campaigns.js";

/**
 * Records that a project's campaigns must stop sending, and waits for the fan-out batches under way:
 * the project's SENDING campaigns are locked in this transaction, so a batch holding one commits
 * first, and every batch after it (commitBatch reads the table under the same lock) sees the row.
 */
export async function stopProject(tx: Tx, projectId: string, reason: string, at: Date): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO stopped_projects (project_id, reason, stopped_at) VALUES (${projectId}::uuid, ${reason}, ${at})
    ON CONFLICT (project_id) DO UPDATE SET reason = excluded.reason, stopped_at = excluded.stopped_at`;
  await tx.$queryRaw`SELECT id FROM campaigns WHERE project_id = ${projectId}::uuid AND status = 'SENDING' FOR UPDATE`;
}

/** The project may send again: its campaigns go on where they stopped. */
export async function resumeProject(tx: Tx, projectId: string): Promise<void> {
  await tx.$executeRaw`DELETE FROM stopped_projects WHERE project_id = ${projectId}::uuid`;
}

export async function isProjectStopped(tx: Tx, projectId: string): Promise<boolean> {
  const rows = await tx.$queryRaw<unknown[]>`SELECT 1 FROM stopped_projects WHERE project_id = ${projectId}::uuid`;
  return rows.length > 0;
}
