import { create } from "@bufbuild/protobuf";
import { createEnvelope, topics, writeOutboxEvent } from "@herald/kafka";
import { EmailActivitySchema, EmailCategory } from "@herald/proto/herald/events/v1/email_activity_pb";
import type { Tx } from "../db/emails.js";
import type { EmailCategory as CategoryName } from "../domain/email-input.js";

/** What produces herald.email-activity.v1 envelopes. */
export const eventSource = "delivery";

export type EmailActivityType = "email.sent" | "email.bounce" | "email.failed" | "email.deferred";

const categoryToProto: Record<CategoryName, EmailCategory> = {
  TRANSACTIONAL: EmailCategory.TRANSACTIONAL,
  CAMPAIGN: EmailCategory.CAMPAIGN,
  WORKFLOW: EmailCategory.WORKFLOW,
};

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

/** Writes one email-activity event into the outbox, in the transaction of the status change it reports. */
export async function writeEmailActivity(
  tx: Tx,
  type: EmailActivityType,
  email: EmailActivityFacts,
  details: { reason?: string; occurredAt?: Date } = {},
): Promise<void> {
  const envelope = createEnvelope({
    type,
    projectId: email.projectId,
    contactId: email.contactId ?? undefined,
    source: eventSource,
    occurredAt: details.occurredAt,
    payloadSchema: EmailActivitySchema,
    payload: create(EmailActivitySchema, {
      emailId: email.id,
      category: categoryToProto[email.category as CategoryName] ?? EmailCategory.TRANSACTIONAL,
      campaignId: email.campaignId ?? "",
      workflowId: email.workflowId ?? "",
      recipient: email.toEmail,
      reason: details.reason ?? "",
      messageId: email.messageId,
      attempts: email.attempts,
    }),
  });
  await writeOutboxEvent(tx, topics.emailActivity, envelope);
}
