import type { JsonObject as ProtoJson } from "@bufbuild/protobuf";
import { erasedContactsAmong } from "@herald/db";
import { createEventConsumer, type EventEnvelope, payloadOf, topics } from "@herald/kafka";
import type { Logger } from "@herald/platform";
import { ContactEventSchema } from "@herald/proto/herald/events/v1/contact_event_pb";
import { EmailActivitySchema } from "@herald/proto/herald/events/v1/email_activity_pb";
import type { Kafka } from "kafkajs";
import type { Db, Tx } from "../db/client.js";
import { isProjectStopped } from "../db/stopped-projects.js";
import { isId } from "../domain/ids.js";
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

/** Whether an event can start or wake anything, by the in-memory index alone: most tracked events cannot. */
export async function mayTrigger(event: EventEnvelope, index: TriggerIndex): Promise<boolean> {
  if (!event.contactId || !event.projectId) return false;
  const triggers = await index.get(event.projectId);
  return triggers.byEvent.has(event.type) || triggers.waitedFor.has(event.type);
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
  // A disabled project's events start nothing and end no wait: its workflows resume, as they were, once it is enabled.
  if (await isProjectStopped(tx, event.projectId)) return false;
  const data = eventDataOf(event);
  let queued = false;
  for (const workflow of workflows) {
    const started = await startExecution(tx, workflow, event.contactId, { eventId: event.eventId, name: event.type, data }, {});
    queued ||= started !== undefined;
  }
  if (waited) {
    // A WAIT_FOR_EVENT run waits from the moment it is created (waiting_for is set then), so an event that
    // comes while the run is still PENDING, or RUNNING on its way to WAITING, wakes it too: the runner's
    // record of that pass finds its claim gone (status is no longer RUNNING) and the woken run goes on.
    const output = JSON.stringify({ event: { name: event.type, data } });
    const woken = await tx.$executeRaw`
      UPDATE workflow_step_runs SET status = 'PENDING', run_at = now(), wake_reason = 'event', waiting_for = NULL, output = ${output}::jsonb
      WHERE project_id = ${event.projectId} AND contact_id = ${event.contactId} AND waiting_for = ${event.type}
        AND status IN ('PENDING', 'RUNNING', 'WAITING')`;
    queued ||= woken > 0;
  }
  return queued;
}

/**
 * Tracked events and email activity start workflows and end waits. Most events match no
 * enabled workflow and no wait: the index in memory says so, and they are passed over with
 * no write at all. The others are applied in chunks, their ids recorded in processed_events
 * in one statement per chunk, so that a redelivered event is applied once.
 */
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
    accepts: (event) => mayTrigger(event, options.index),
    handleChunk: async (events, tx) => {
      // An event about a contact erased before it got here starts nothing and wakes nothing (docs/decisions.md).
      const erased = await erasedContactsAmong(
        tx,
        "automation",
        events.filter((event) => isId(event.projectId)).map((event) => ({ projectId: event.projectId, contactId: event.contactId })),
      );
      let queued = false;
      for (const event of events) {
        if (erased.has(`${event.projectId} ${event.contactId}`)) continue;
        queued = (await applyTriggerEvent(tx, event, options.index)) || queued;
      }
      // The runner polls too: a nudge that comes before this transaction commits costs one idle interval at most.
      if (queued) setTimeout(options.nudgeRunner, 20);
    },
  });
}
