import type { Tx } from "./emails.js";

/**
 * How far a suspended project's claimed email is put back: out of every claim's reach until the operator
 * re-enables the project, which makes its held emails due at once (resumeSuspendedProject).
 */
export const heldForSuspensionMs = 10 * 365 * 86_400_000;

/** Records identity's project.suspended: the project's enqueues are refused and its queue held (dispatcher). */
export async function suspendProject(tx: Tx, projectId: string, reason: string, at: Date): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO suspended_projects (project_id, reason, suspended_at) VALUES (${projectId}::uuid, ${reason}, ${at})
    ON CONFLICT (project_id) DO UPDATE SET reason = excluded.reason, suspended_at = excluded.suspended_at`;
}

/** The project may send again (project.enabled): its held emails are due now, in the order they were queued. */
export async function resumeSuspendedProject(tx: Tx, projectId: string): Promise<void> {
  const removed = await tx.$executeRaw`DELETE FROM suspended_projects WHERE project_id = ${projectId}::uuid`;
  if (removed === 0) return;
  await tx.$executeRaw`
    UPDATE emails SET next_attempt_at = now(), updated_at = now()
    WHERE project_id = ${projectId}::uuid AND status = 'PENDING' AND next_attempt_at > now()`;
}

/** A deleted project's row goes with its emails. */
export async function forgetSuspendedProject(tx: Tx, projectId: string): Promise<void> {
  await tx.$executeRaw`DELETE FROM suspended_projects WHERE project_id = ${projectId}::uuid`;
}
