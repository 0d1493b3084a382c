import type { JsonObject } from "@bufbuild/protobuf";

/** A webhook event's body: one shape for every type (docs/api-decisions.md "Outbound webhooks"). */
export interface WebhookEvent {
  type: string;
  /** ISO 8601 of the fact's occurred_at. */
  timestamp: string;
  data: JsonObject;
}

export interface EventTypeEntry {
  type: string;
  description: string;
  /** The example's data; projectId and the ids are filled in by exampleEvent. */
  example: JsonObject;
}

const emailIds = {
  emailId: "5b1f0c0e-6f0a-4b7e-9c1d-2a8e7f3b9d10",
  contactId: "8d3c2b1a-0f9e-4d8c-b7a6-5e4f3d2c1b0a",
  campaignId: null,
  workflowId: null,
  recipient: "ada@example.com",
  category: "transactional",
  messageId: "<5b1f0c0e-6f0a-4b7e-9c1d-2a8e7f3b9d10@mail.example.com>",
};

/** Every webhook event type Herald sends, in the order the dashboard lists them. */
export const eventTypeCatalogue: readonly EventTypeEntry[] = [
  { type: "email.sent", description: "The mail relay accepted an email.", example: { ...emailIds } },
  { type: "email.delivered", description: "The recipient's server accepted the email.", example: { ...emailIds } },
  {
    type: "email.deferred",
    description: "Delivery failed for now and will be tried again.",
    example: { ...emailIds, reason: "421 4.7.0 Try again later" },
  },
  {
    type: "email.bounced",
    description: "The email bounced permanently; the address is suppressed.",
    example: { ...emailIds, reason: "550 5.1.1 User unknown" },
  },
  { type: "email.complained", description: "The recipient marked the email as spam.", example: { ...emailIds } },
  { type: "email.opened", description: "The recipient opened the email (tracking pixel).", example: { ...emailIds } },
  {
    type: "email.clicked",
    description: "The recipient clicked a tracked link.",
    example: { ...emailIds, url: "https://example.com/pricing" },
  },
  { type: "email.unsubscribed", description: "The recipient unsubscribed through the email's link.", example: { ...emailIds } },
  {
    type: "email.failed",
    description: "Herald gave up on sending the email.",
    example: { ...emailIds, reason: "gave up after 5 attempts: connection refused" },
  },
  {
    type: "email.received",
    description: "The project received an email on one of its domains.",
    example: {
      ...emailIds,
      category: "inbound",
      recipient: "support@example.com",
      subject: "Re: your order",
      sender: "ada@example.com",
      inReplyToEmailId: null,
    },
  },
  {
    type: "contact.created",
    description: "A contact was created.",
    example: { contactId: emailIds.contactId, email: "ada@example.com", subscribed: true, data: { plan: "pro" }, changedFields: [] },
  },
  {
    type: "contact.updated",
    description: "A contact's email, subscription or data changed.",
    example: {
      contactId: emailIds.contactId,
      email: "ada@example.com",
      subscribed: true,
      data: { plan: "team" },
      changedFields: ["data.plan"],
    },
  },
  {
    type: "contact.deleted",
    description: "A contact was deleted.",
    example: { contactId: emailIds.contactId, email: "ada@example.com", subscribed: false, data: {}, changedFields: [] },
  },
  {
    type: "contact.subscribed",
    description: "A contact subscribed.",
    example: { contactId: emailIds.contactId, email: "ada@example.com" },
  },
  {
    type: "contact.unsubscribed",
    description: "A contact unsubscribed.",
    example: { contactId: emailIds.contactId, email: "ada@example.com" },
  },
  {
    type: "segment.entered",
    description: "A contact entered a segment.",
    example: {
      contactId: emailIds.contactId,
      email: "ada@example.com",
      segmentId: "0c9b8a7f-6e5d-4c3b-a291-8f7e6d5c4b3a",
      segmentName: "Pro users",
      segmentSlug: "pro-users",
    },
  },
  {
    type: "segment.exited",
    description: "A contact left a segment.",
    example: {
      contactId: emailIds.contactId,
      email: "ada@example.com",
      segmentId: "0c9b8a7f-6e5d-4c3b-a291-8f7e6d5c4b3a",
      segmentName: "Pro users",
      segmentSlug: "pro-users",
    },
  },
  {
    type: "campaign.sent",
    description: "A campaign finished sending.",
    example: {
      campaignId: "3e2d1c0b-9a8f-4e7d-86c5-b4a392817060",
      name: "June newsletter",
      subject: "What's new in June",
      recipients: 1200,
    },
  },
  {
    type: "campaign.paused",
    description: "A campaign stopped sending because its project was suspended.",
    example: {
      campaignId: "3e2d1c0b-9a8f-4e7d-86c5-b4a392817060",
      name: "June newsletter",
      subject: "What's new in June",
      recipients: 1200,
      reason: "project suspended",
    },
  },
  {
    type: "workflow.execution.completed",
    description: "A workflow execution reached its end.",
    example: {
      workflowId: "7a6b5c4d-3e2f-4a1b-9c8d-7e6f5a4b3c2d",
      executionId: "1f2e3d4c-5b6a-4798-8a7b-6c5d4e3f2a1b",
      workflowName: "Onboarding",
      triggerEvent: "signup",
      contactId: emailIds.contactId,
    },
  },
  {
    type: "workflow.execution.failed",
    description: "A workflow execution failed at a step.",
    example: {
      workflowId: "7a6b5c4d-3e2f-4a1b-9c8d-7e6f5a4b3c2d",
      executionId: "1f2e3d4c-5b6a-4798-8a7b-6c5d4e3f2a1b",
      workflowName: "Onboarding",
      triggerEvent: "signup",
      contactId: emailIds.contactId,
      failedStepId: "9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b",
      error: "The webhook answered 500",
    },
  },
];

export const eventTypeNames: ReadonlySet<string> = new Set(eventTypeCatalogue.map((entry) => entry.type));

/** An example event of a type (POST /settings/webhooks/:id/test, GET /settings/webhooks/event-types). */
export function exampleEvent(type: string, projectId: string, at: Date = new Date()): WebhookEvent | undefined {
  const entry = eventTypeCatalogue.find((candidate) => candidate.type === type);
  if (!entry) return undefined;
  return { type, timestamp: at.toISOString(), data: { projectId, ...entry.example } };
}

/** Whether an endpoint that subscribes to `eventTypes` ([] = all) takes events of `type`. */
export const subscribes = (eventTypes: readonly string[], type: string): boolean => eventTypes.length === 0 || eventTypes.includes(type);
