import type { DescMessage, JsonObject, MessageShape } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { type EventEnvelope, payloadOf, topics } from "@herald/kafka";
import { CampaignEventSchema } from "@herald/proto/herald/events/v1/campaign_event_pb";
import { ContactChangeSchema } from "@herald/proto/herald/events/v1/contact_change_pb";
import { ContactEventSchema } from "@herald/proto/herald/events/v1/contact_event_pb";
import { EmailActivitySchema, EmailCategory } from "@herald/proto/herald/events/v1/email_activity_pb";
import { WorkflowExecutionEventSchema } from "@herald/proto/herald/events/v1/workflow_execution_event_pb";
import type { WebhookEvent } from "../domain/event-types.js";

/** The topics whose facts become webhook events. */
export const factTopics = [
  topics.emailActivity,
  topics.contactEvents,
  topics.contactChanges,
  topics.campaignEvents,
  topics.workflowExecutions,
];

/** Delivery's activity types (services/delivery/src/events/email-activity-outbox.ts) → the webhook types of the contract. */
const emailTypes: Readonly<Record<string, string>> = {
  "email.sent": "email.sent",
  "email.delivery": "email.delivered",
  "email.deferred": "email.deferred",
  "email.bounce": "email.bounced",
  "email.complaint": "email.complained",
  "email.open": "email.opened",
  "email.click": "email.clicked",
  "email.unsubscribe": "email.unsubscribed",
  "email.failed": "email.failed",
  "email.received": "email.received",
};

const categoryNames: Readonly<Record<number, string>> = {
  [EmailCategory.TRANSACTIONAL]: "transactional",
  [EmailCategory.CAMPAIGN]: "campaign",
  [EmailCategory.WORKFLOW]: "workflow",
  [EmailCategory.INBOUND]: "inbound",
};

const segmentEventPattern = /^segment\.(.+)\.(entry|exit)$/;

const orNull = (value: string): string | null => value || null;

function unpacked<Desc extends DescMessage>(envelope: EventEnvelope, schema: Desc): MessageShape<Desc> | undefined {
  try {
    return payloadOf(envelope, schema);
  } catch {
    return undefined;
  }
}

/** Which fact an envelope holds: its type names it, and its payload's own type confirms it (unpacked answers undefined otherwise). */
function kindOf(type: string): string | undefined {
  if (type in emailTypes) return topics.emailActivity;
  if (type === "contact.subscribed" || type === "contact.unsubscribed" || segmentEventPattern.test(type)) return topics.contactEvents;
  if (type === "contact.created" || type === "contact.updated" || type === "contact.deleted") return topics.contactChanges;
  if (type === "campaign.sent" || type === "campaign.paused") return topics.campaignEvents;
  if (type === "workflow.execution.completed" || type === "workflow.execution.failed") return topics.workflowExecutions;
  return undefined;
}

/**
 * The webhook type and data of a fact's envelope, or undefined when the fact is no webhook event: a tracked event (whose
 * payload is a ContactEvent whatever its name), an unknown type, or a payload that is not the type's message.
 */
function typeAndData(envelope: EventEnvelope): { type: string; data: JsonObject } | undefined {
  const contactId = orNull(envelope.contactId);
  switch (kindOf(envelope.type)) {
    case topics.emailActivity: {
      const type = emailTypes[envelope.type];
      const activity = type ? unpacked(envelope, EmailActivitySchema) : undefined;
      if (!type || !activity) return undefined;
      const data: JsonObject = {
        emailId: activity.emailId,
        contactId,
        campaignId: orNull(activity.campaignId),
        workflowId: orNull(activity.workflowId),
        recipient: activity.recipient,
        category: categoryNames[activity.category] ?? "transactional",
        messageId: activity.messageId,
      };
      if (activity.url) data.url = activity.url;
      if (activity.reason) data.reason = activity.reason;
      if (type === "email.received") {
        data.subject = activity.subject;
        data.sender = activity.sender;
        data.inReplyToEmailId = orNull(activity.inReplyToEmailId);
      }
      return { type, data };
    }
    case topics.contactEvents: {
      const event = unpacked(envelope, ContactEventSchema);
      if (!event) return undefined;
      if (envelope.type === "contact.subscribed" || envelope.type === "contact.unsubscribed") {
        return { type: envelope.type, data: { contactId, email: event.contactEmail } };
      }
      const segment = segmentEventPattern.exec(envelope.type);
      if (!segment) return undefined;
      const details = event.data ?? {};
      return {
        type: segment[2] === "entry" ? "segment.entered" : "segment.exited",
        data: {
          contactId,
          email: event.contactEmail,
          segmentId: typeof details.segmentId === "string" ? details.segmentId : null,
          segmentName: typeof details.segmentName === "string" ? details.segmentName : null,
          segmentSlug: segment[1] ?? "",
        },
      };
    }
    case topics.contactChanges: {
      const change = unpacked(envelope, ContactChangeSchema);
      if (!change) return undefined;
      return {
        type: envelope.type,
        data: {
          contactId,
          email: change.email,
          subscribed: change.subscribed,
          data: change.data ?? {},
          changedFields: [...change.changedFields],
        },
      };
    }
    case topics.campaignEvents: {
      const campaign = unpacked(envelope, CampaignEventSchema);
      if (!campaign) return undefined;
      const data: JsonObject = {
        campaignId: campaign.campaignId,
        name: campaign.name,
        subject: campaign.subject,
        recipients: Number(campaign.recipients),
      };
      if (campaign.reason) data.reason = campaign.reason;
      return { type: envelope.type, data };
    }
    case topics.workflowExecutions: {
      const execution = unpacked(envelope, WorkflowExecutionEventSchema);
      if (!execution) return undefined;
      const data: JsonObject = {
        workflowId: execution.workflowId,
        executionId: execution.executionId,
        workflowName: execution.workflowName,
        triggerEvent: execution.triggerEvent,
        contactId,
      };
      if (envelope.type === "workflow.execution.failed") {
        data.failedStepId = orNull(execution.failedStepId);
        data.error = execution.error;
      }
      return { type: envelope.type, data };
    }
    default:
      return undefined;
  }
}

/** The webhook event a fact becomes: `{ type, timestamp, data }` with the project's id first in data. */
export function webhookEventOf(envelope: EventEnvelope): WebhookEvent | undefined {
  const mapped = typeAndData(envelope);
  if (!mapped) return undefined;
  const occurredAt = envelope.occurredAt ? timestampDate(envelope.occurredAt) : new Date();
  return { type: mapped.type, timestamp: occurredAt.toISOString(), data: { projectId: envelope.projectId, ...mapped.data } };
}
