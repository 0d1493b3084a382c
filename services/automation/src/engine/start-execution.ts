import type { Tx } from "../db/client.js";
import { entryStepOf, type GraphStep, type GraphTransition } from "../domain/graph.js";
import type { JsonObject } from "../domain/step-config.js";

export interface RunnableWorkflow {
  id: string;
  projectId: string;
  allowReentry: boolean;
  steps: GraphStep[];
  transitions: GraphTransition[];
}

export interface Trigger {
  /** The Kafka event's id; undefined for a manual start. */
  eventId?: string;
  name: string;
  data: JsonObject;
}

/**
 * Creates an execution and its first step run (PENDING, due now) in the caller's
 * transaction, or nothing when the workflow refuses re-entry and the contact has had an
 * execution of it before (the entrants table remembers every contact that entered).
 */
export async function startExecution(
  tx: Tx,
  workflow: RunnableWorkflow,
  contactId: string,
  trigger: Trigger,
  context: JsonObject,
): Promise<string | undefined> {
  const entry = entryStepOf(workflow.steps, workflow.transitions);
  if (!entry) return undefined;
  const entered = await tx.$executeRaw`
    INSERT INTO workflow_entrants (project_id, workflow_id, contact_id) VALUES (${workflow.projectId}, ${workflow.id}::uuid, ${contactId})
    ON CONFLICT DO NOTHING`;
  if (entered === 0 && !workflow.allowReentry) return undefined;
  const executionId = crypto.randomUUID();
  // One execution per (workflow, event), whoever applies the event and however often: the consumer
  // records processed event ids too, but this keeps a start idempotent on its own, under concurrency too.
  const created = await tx.$executeRaw`
    INSERT INTO workflow_executions (id, workflow_id, project_id, contact_id, status, context, trigger_event_id, trigger_event, trigger_data, current_step_id)
    VALUES (${executionId}::uuid, ${workflow.id}::uuid, ${workflow.projectId}, ${contactId}, 'RUNNING', ${JSON.stringify(context)}::jsonb,
            ${trigger.eventId ?? null}, ${trigger.name}, ${JSON.stringify(trigger.data)}::jsonb, ${entry.id}::uuid)
    ON CONFLICT (project_id, workflow_id, trigger_event_id) DO NOTHING`;
  if (created === 0) return undefined;
  // A WAIT_FOR_EVENT waits from the moment it is reached: its event name is on the run from the start (stepRunWaitingFor).
  await tx.$executeRaw`
    INSERT INTO workflow_step_runs (id, execution_id, project_id, step_id, step_type, status, contact_id, waiting_for)
    VALUES (${crypto.randomUUID()}::uuid, ${executionId}::uuid, ${workflow.projectId}, ${entry.id}::uuid, ${entry.type}, 'PENDING', ${contactId},
            (SELECT config->>'eventName' FROM workflow_steps WHERE id = ${entry.id}::uuid AND type = 'WAIT_FOR_EVENT'))`;
  return executionId;
}
