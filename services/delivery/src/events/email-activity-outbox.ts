import { create } from "@bufbuild/protobuf";
import { createEnvelope, insertOutboxRow, type OutboxRow, outboxRowOf, topics } from "@herald/kafka";
import { EmailActivitySchema, EmailCategory } from "@herald/proto/herald/events/v1/email_activity_pb";
import { insertActivity, type NewActivityRow } from "../db/activity.js";
import type { Tx } from "../db/emails.js";
import type { EmailCategory as CategoryName } from "../domain/email-input.js";

/** What produces herald.email-activity.v1 envelopes. */
export const eventSource = "delivery";

/** Every type on herald.email-activity.v1, and in the email_activity table (its CHECK constraint lists the same). */
export const emailActivityTypes = [
  "email.sent",
  "email.delivery",
  "email.open",
  "email.click",
  "email.bounce",
  "email.complaint",
  "email.failed",
  "email.deferred",
  "email.received",
  "email.unsubscribe",
] as const;

export type EmailActivityType = (typeof emailActivityTypes)[number];

const categoryToProto: Record<CategoryName | "INBOUND", EmailCategory> = {
  TRANSACTIONAL: EmailCategory.TRANSACTIONAL,
  CAMPAIGN: EmailCategory.CAMPAIGN,
  WORKFLOW: EmailCategory.WORKFLOW,
  INBOUND: EmailCategory.INBOUND,
};

/** What an event says beyond its email: the link of a click, the answer of a bounce, what a received message is. */
export interface EmailActivityDetails {
  reason?: string;
  url?: string;
  occurredAt?: Date;
  /** email.received: the message's Subject, the address of its From header, and our email its In-Reply-To names. */
  subject?: string;
  sender?: string;
  inReplyToEmailId?: string;
  /** email.bounce: the relay refused the email as it was handed over (no email.sent before it). */
  refusedAtHandover?: boolean;
}

export interface EmailActivityFacts {
  id: string;
  projectId: string;
  contactId: string | null;
  toEmail: string;
  category: string;
  campaignId: string | null;
  workflowId: string | null;
  messageId: string;
  attempts: number;
}

/** One email-activity event as both its rows: the outbox row that publishes it and the email_activity row that shows it. */
export interface EmailActivityEvent {
  outbox: OutboxRow;
  activity: NewActivityRow;
}

/** Builds an event's two rows; writeEmailActivity and the dispatcher's batched writer (db/outcomes.ts) write them. */
export function emailActivityEvent(
  type: EmailActivityType,
  email: EmailActivityFacts,
  details: EmailActivityDetails = {},
): EmailActivityEvent {
  const occurredAt = details.occurredAt ?? new Date();
  const envelope = createEnvelope({
    type,
    projectId: email.projectId,
    contactId: email.contactId ?? undefined,
    source: eventSource,
    occurredAt,
    payloadSchema: EmailActivitySchema,
    payload: create(EmailActivitySchema, {
      emailId: email.id,
      category: categoryToProto[email.category as CategoryName | "INBOUND"] ?? EmailCategory.TRANSACTIONAL,
      campaignId: email.campaignId ?? "",
      workflowId: email.workflowId ?? "",
      recipient: email.toEmail,
      url: details.url ?? "",
      reason: details.reason ?? "",
      messageId: email.messageId,
      attempts: email.attempts,
      subject: details.subject ?? "",
      sender: details.sender ?? "",
      inReplyToEmailId: details.inReplyToEmailId ?? "",
      refusedAtHandover: details.refusedAtHandover ?? false,
    }),
  });
  return {
    outbox: outboxRowOf(topics.emailActivity, envelope),
    activity: {
      id: envelope.eventId,
      projectId: email.projectId,
      emailId: email.id,
      contactId: email.contactId,
      type,
      recipient: email.toEmail,
      url: details.url || null,
      reason: details.reason || null,
      campaignId: email.campaignId,
      workflowId: email.workflowId,
      category: email.category,
      occurredAt,
      ...(details.subject === undefined ? {} : { subject: details.subject }),
      ...(details.sender === undefined ? {} : { sender: details.sender }),
      ...(details.inReplyToEmailId === undefined ? {} : { inReplyToEmailId: details.inReplyToEmailId }),
    },
  };
}

/**
 * Writes one email-activity event into the outbox and the same fact into email_activity (the
 * activity feed and send analytics), in the transaction of the status change it reports: with
 * the dispatcher's batched writer, the only places that do both, so nothing is published that
 * the feed does not show, nor the reverse.
 */
export async function writeEmailActivity(
  tx: Tx,
  type: EmailActivityType,
  email: EmailActivityFacts,
  details: EmailActivityDetails = {},
): Promise<void> {
  const { outbox, activity } = emailActivityEvent(type, email, details);
  await insertOutboxRow(tx, outbox);
  await insertActivity(tx, activity);
}
