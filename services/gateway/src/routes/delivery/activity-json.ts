import { Type } from "@fastify/type-provider-typebox";
import type { Activity } from "@herald/proto/herald/delivery/v1/activity_service_pb";
import { iso, Nullable } from "../shared-schemas.js";

/** An activity row of delivery as REST shows it: GET /activity and the emails of a contact's export. */
export const ActivitySchema = Type.Object({
  id: Type.String(),
  type: Type.String(),
  emailId: Type.String(),
  contactId: Nullable(Type.String()),
  recipient: Type.String(),
  url: Nullable(Type.String()),
  reason: Nullable(Type.String()),
  campaignId: Nullable(Type.String()),
  workflowId: Nullable(Type.String()),
  category: Type.String(),
  createdAt: Type.String(),
  /** email.received: its Subject, the address it came from, and our email it answers; null otherwise. */
  subject: Nullable(Type.String()),
  sender: Nullable(Type.String()),
  inReplyTo: Nullable(Type.String()),
});

export const toActivityJson = (activity: Activity) => ({
  id: activity.id,
  type: activity.type,
  emailId: activity.emailId,
  contactId: activity.contactId || null,
  recipient: activity.recipient,
  url: activity.url || null,
  reason: activity.reason || null,
  campaignId: activity.campaignId || null,
  workflowId: activity.workflowId || null,
  category: activity.category,
  createdAt: iso(activity.occurredAt) ?? "",
  subject: activity.type === "email.received" ? activity.subject : null,
  sender: activity.sender || null,
  inReplyTo: activity.inReplyToEmailId || null,
});
