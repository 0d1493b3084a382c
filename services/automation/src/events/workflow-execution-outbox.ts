import { create } from "@bufbuild/protobuf";
import { createEnvelope, type SqlClient, topics, writeOutboxEvent } from "@herald/kafka";
import { WorkflowExecutionEventSchema } from "@herald/proto/herald/events/v1/workflow_execution_event_pb";

export type WorkflowExecutionEventType = "workflow.execution.completed" | "workflow.execution.failed";

/** The execution as its event tells it. */
export interface EndedExecution {
  id: string;
  workflowId: string;
  workflowName: string;
  projectId: string;
  contactId: string;
  triggerEvent: string;
}

/**
 * Records, in the transaction that ends an execution, that it completed or failed (an
 * execution cancelled, exited by its EXIT step or by its workflow's deletion, has no
 * event). Keyed by the execution's contact.
 */
export async function writeWorkflowExecutionEvent(
  tx: SqlClient,
  type: WorkflowExecutionEventType,
  execution: EndedExecution,
  details: { occurredAt: Date; failedStepId?: string; error?: string },
): Promise<void> {
  await writeOutboxEvent(
    tx,
    topics.workflowExecutions,
    createEnvelope({
      type,
      projectId: execution.projectId,
      contactId: execution.contactId,
      source: "automation",
      occurredAt: details.occurredAt,
      payloadSchema: WorkflowExecutionEventSchema,
      payload: create(WorkflowExecutionEventSchema, {
        executionId: execution.id,
        workflowId: execution.workflowId,
        workflowName: execution.workflowName,
        triggerEvent: execution.triggerEvent,
        failedStepId: details.failedStepId ?? "",
        error: details.error ?? "",
      }),
    }),
  );
}
