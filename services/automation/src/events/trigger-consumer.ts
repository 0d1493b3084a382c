import type { JsonObject as ProtoJson } from "@bufbuild/protobuf";
import { createEventConsumer, type EventEnvelope, payloadOf, topics } from "@herald/kafka";
import type { Logger } from "@herald/platform";
import { ContactEventSchema } from "@herald/proto/herald/events/v1/contact_event_pb";
import { EmailActivitySchema } from "@herald/proto/herald/events/v1/email_activity_pb";
import type { Kafka } from "kafkajs";
import type { Db, Tx } from "../db/client.js";
import type { JsonObject } from "../domain/step-config.js";
import { startExecution } from "../engine/start-execution.js";
import type { TriggerIndex } from "../engine/trigger-index.js";

export const triggerGroupId = "automation.triggers";

/** The data an event carries into an execution (trigger.data.<key>) and into a WAIT_FOR_EVENT's output. */
export function eventDataOf(event: EventEnvelope): JsonObject {
  const contactEvent = event.payload?.typeUrl.endsWith("ContactEvent") ? payloadOf(event, ContactEventSchema) : undefined;
  if (contactEvent) return (contactEvent.data ?? {}) as ProtoJson as JsonObject;
  const activity = event.payload?.typeUrl.endsWith("EmailActivity") ? payloadOf(event, EmailActivitySchema) : undefined;
  if (activity) {
    return {
      emailId: activity.emailId,
      ...(activity.campaignId ? { campaignId: activity.campaignId } : {}),
      ...(activity.workflowId ? { workflowId: activity.workflowId } : {}),
      ...(activity.url ? { url: activity.url } : {}),
      ...(activity.reason ? { reason: activity.reason } : {}),
    };
  }
  return {};
}

/**
 * Applies one event in the consumer's transaction: starts every enabled workflow whose
 * trigger it matches for its contact, and wakes the contact's WAIT_FOR_EVENT steps that
 * wait for it. Answers whether it queued anything for the runner.
 */
export async function applyTriggerEvent(tx: Tx, event: EventEnvelope, index: TriggerIndex): Promise<boolean> {
  if (!event.contactId || !event.projectId) return false;
  const triggers = await index.get(event.projectId);
  const workflows = triggers.byEvent.get(event.type) ?? [];
  const waited = triggers.waitedFor.has(event.type);
  if (workflows.length === 0 && !waited) return false;
  const data = eventDataOf(event);
  let queued = false;
  for (const workflow of workflows) {
    const started = await startExecution(tx, workflow, event.contactId, { eventId: event.eventId, name: event.type, data }, {});
    queued ||= started !== undefined;
  }
  if (waited) {
    const output = JSON.stringify({ event: { name: event.type, data } });
    const woken = await tx.$executeRaw`
      UPDATE workflow_step_runs SET status = 'PENDING', run_at = now(), wake_reason = 'event', waiting_for = NULL, output = ${output}::jsonb
      WHERE project_id = ${event.projectId} AND contact_id = ${event.contactId} AND waiting_for = ${event.type} AND status = 'WAITING'`;
    queued ||= woken > 0;
  }
  return queued;
}

/** Tracked events and email activity start workflows and end waits; a redelivered event is applied once (processed_events). */
export function createTriggerConsumer(options: {
  kafka: Kafka;
  db: Db;
  logger: Logger;
  groupId: string;
  index: TriggerIndex;
  nudgeRunner: () => void;
}) {
  return createEventConsumer({
    kafka: options.kafka,
    groupId: options.groupId,
    topics: [topics.contactEvents, topics.emailActivity],
    db: options.db,
    logger: options.logger,
    handle: async (event, tx) => {
      // The runner polls too: a nudge that comes before this transaction commits costs one idle interval at most.
      if (await applyTriggerEvent(tx, event, options.index)) setTimeout(options.nudgeRunner, 20);
    },
  });
}
