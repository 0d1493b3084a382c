import { randomUUID } from "node:crypto";
import type { NewEmailRow } from "../db/emails.js";

/** An email as the enqueue path stores it, due now. */
export const newEmailRow = (projectId: string, index: number): NewEmailRow => ({
  id: randomUUID(),
  projectId,
  contactId: null,
  idempotencyKey: null,
  toEmail: `r${index}@plans.example`,
  toName: null,
  fromEmail: "hello@plans.example",
  fromName: null,
  replyTo: null,
  subject: `Email ${index}`,
  html: `<p>Email ${index}</p>`,
  headers: {},
  attachments: [],
  listUnsubscribe: null,
  templateId: null,
  campaignId: null,
  workflowId: null,
  category: "TRANSACTIONAL",
  messageId: `<${randomUUID()}@plans.example>`,
  traceParent: null,
});
