import type { ContactErasure } from "@herald/kafka";
import type { Tx } from "./client.js";

/**
 * Forgets an erased contact in the project's workflow executions: the live ones are cancelled (their queued and waiting
 * steps with them), and every execution and step run keeps its workflow, step, status and times (the workflow's counts)
 * but loses the contact's id, its context, the event that started it, and what its steps produced or failed with (a
 * webhook's answer or an error may quote the contact). Its entrant rows go: re-entry is about a contact that no
 * longer exists. Idempotent: a second run finds nothing that names the contact.
 */
export async function eraseContactFromAutomation(tx: Tx, erasure: ContactErasure): Promise<number> {
  const { projectId, contactId } = erasure;
  const executions = await tx.$queryRaw<Array<{ id: string; workflow_id: string }>>`
    UPDATE workflow_executions SET
      contact_id = '', context = '{}', trigger_event_id = NULL, trigger_data = '{}',
      reason = CASE WHEN status IN ('RUNNING', 'WAITING') THEN 'Cancelled: the contact was erased' ELSE '' END,
      finished_at = CASE WHEN status IN ('RUNNING', 'WAITING') THEN now() ELSE finished_at END,
      status = CASE WHEN status IN ('RUNNING', 'WAITING') THEN 'CANCELLED' ELSE status END,
      updated_at = now()
    WHERE project_id = ${projectId} AND contact_id = ${contactId}
    RETURNING id::text AS id, workflow_id::text AS workflow_id`;
  if (executions.length > 0) {
    // A RUNNING step finishes what it started; the runner sees the execution cancelled and records nothing more.
    await tx.$executeRaw`
      UPDATE workflow_step_runs SET
        contact_id = '', output = '{}', error = '', waiting_for = NULL,
        finished_at = CASE WHEN status IN ('PENDING', 'WAITING') THEN now() ELSE finished_at END,
        status = CASE WHEN status IN ('PENDING', 'WAITING') THEN 'CANCELLED' ELSE status END
      WHERE project_id = ${projectId} AND execution_id = ANY(${executions.map((execution) => execution.id)}::uuid[])`;
  }
  await tx.$executeRaw`
    DELETE FROM workflow_entrants
    WHERE project_id = ${projectId} AND contact_id = ${contactId}
      AND workflow_id IN (SELECT id FROM workflows WHERE project_id = ${projectId})`;
  return executions.length;
}
