import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { createEnvelope, decodeEnvelope, managedConsumer, type SqlClient, writeOutboxEvent } from "@herald/kafka";
import type { Logger } from "@herald/platform";
import { WorkflowChangedSchema } from "@herald/proto/herald/events/v1/workflow_changed_pb";
import type { Kafka } from "kafkajs";

/** The automation service's own topic: every replica hears of every change to any workflow. */
export const workflowChangesTopic = "herald.workflow-changes.v1";

/** Records, in the caller's transaction, that a project's workflows changed. */
export async function recordWorkflowChange(tx: SqlClient, projectId: string, workflowId: string): Promise<void> {
  await writeOutboxEvent(
    tx,
    workflowChangesTopic,
    createEnvelope({
      type: "workflow.changed",
      projectId,
      source: "automation",
      payloadSchema: WorkflowChangedSchema,
      payload: create(WorkflowChangedSchema, { workflowId }),
    }),
  );
}

/**
 * Follows herald.workflow-changes.v1 in a consumer group of this process alone (each
 * replica must see every change) and calls onChanged with the project. Kafka being away
 * only delays this: the trigger index's TTL bounds how stale it gets.
 */
export function createWorkflowChangesListener(options: {
  kafka: Kafka;
  logger: Logger;
  groupPrefix: string;
  onChanged: (projectId: string) => void;
}) {
  return managedConsumer({
    create: () => options.kafka.consumer({ groupId: `${options.groupPrefix}automation.triggers.${randomUUID()}` }),
    run: async (consumer) => {
      await consumer.connect();
      await consumer.subscribe({ topic: workflowChangesTopic, fromBeginning: false });
      await consumer.run({
        eachMessage: async ({ message }) => {
          if (!message.value) return;
          try {
            options.onChanged(decodeEnvelope(message.value).projectId);
          } catch (error) {
            options.logger.warn({ err: error }, "skipping a workflow change that is not an event envelope");
          }
        },
      });
    },
    logger: options.logger,
    groupId: "automation.triggers",
    what: "workflow changes listener",
  });
}
