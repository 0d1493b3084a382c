import type { ActivityRow } from "./activity.js";
import type { Db } from "./client.js";
import { Prisma } from "./generated/client.js";

/** An email as a contact's export shows it: attachments by their metadata, not their content. */
export interface ExportedEmailRow {
  id: string;
  toEmail: string;
  toName: string | null;
  fromEmail: string;
  fromName: string | null;
  replyTo: string | null;
  subject: string;
  html: string;
  headers: Record<string, string>;
  attachments: Array<{ filename: string; contentType: string; size: number }>;
  category: string;
  status: string;
  templateId: string | null;
  campaignId: string | null;
  workflowId: string | null;
  messageId: string;
  lastError: string | null;
  createdAt: Date;
  sentAt: Date | null;
  openedAt: Date | null;
  clickedAt: Date | null;
}

/** A contact as delivery finds its mail: by its id, and by its address (lower-case; empty: by its id alone). */
export interface ExportedContact {
  projectId: string;
  contactId: string;
  email: string;
}

type Position = { at: Date; id: string };

/**
 * A page of the contact's emails, newest first, after `before`: those naming it and those sent to its address (the
 * emails its erasure would reach). Each of the two is read in order from its own index
 * (emails_contact_id_project_id_created_at_idx, emails_to_email_project_id_created_at_idx), a page at most, and the two
 * merged: with an OR the planner walks the project's emails by date instead, which finds a quiet contact's few
 * emails only after reading most of the project's. Each email of the page is then read by its key (LATERAL, LIMIT 1 so
 * that it stays a lookup each, never a scan of the project's emails to join them). An attachment's size is computed from its base64 text in the
 * database, so that its content never leaves it.
 */
export async function pageContactEmails(
  db: Db,
  contact: ExportedContact,
  before: Position | undefined,
  limit: number,
): Promise<ExportedEmailRow[]> {
  const after = before ? Prisma.sql`AND (created_at, id) < (${before.at}, ${before.id}::uuid)` : Prisma.empty;
  const byAddress = contact.email
    ? Prisma.sql`UNION
        (SELECT id, created_at FROM emails WHERE project_id = ${contact.projectId}::uuid AND to_email = ${contact.email} ${after}
         ORDER BY created_at DESC, id DESC LIMIT ${limit})`
    : Prisma.empty;
  return db.$queryRaw<ExportedEmailRow[]>`
    WITH mine AS (
      (SELECT id, created_at FROM emails WHERE project_id = ${contact.projectId}::uuid AND contact_id = ${contact.contactId}::uuid ${after}
       ORDER BY created_at DESC, id DESC LIMIT ${limit})
      ${byAddress}
      ORDER BY created_at DESC, id DESC LIMIT ${limit}
    )
    SELECT e.* FROM mine CROSS JOIN LATERAL (
    SELECT e.id::text AS id, e.to_email AS "toEmail", e.to_name AS "toName", e.from_email AS "fromEmail", e.from_name AS "fromName",
      e.reply_to AS "replyTo", e.subject, e.html, e.headers,
      (SELECT coalesce(jsonb_agg(jsonb_build_object(
          'filename', a->>'filename', 'contentType', a->>'contentType',
          'size', length(a->>'content') / 4 * 3 - (length(a->>'content') - length(rtrim(a->>'content', '=')))
        ) ORDER BY n), '[]'::jsonb)
       FROM jsonb_array_elements(e.attachments) WITH ORDINALITY AS x(a, n)) AS attachments,
      e.category, e.status, e.template_id::text AS "templateId", e.campaign_id::text AS "campaignId",
      e.workflow_id::text AS "workflowId", e.message_id AS "messageId", e.last_error AS "lastError",
      e.created_at AS "createdAt", e.sent_at AS "sentAt", e.opened_at AS "openedAt", e.clicked_at AS "clickedAt"
    FROM emails e WHERE e.project_id = ${contact.projectId}::uuid AND e.id = mine.id AND e.created_at = mine.created_at
    LIMIT 1
    ) AS e
    ORDER BY mine.created_at DESC, mine.id DESC`;
}

/** The activity of these emails of the project, oldest first (emails' activity by email_activity_project_id_email_id_idx). */
export function activityOfEmails(db: Db, projectId: string, emailIds: string[]): Promise<ActivityRow[]> {
  if (emailIds.length === 0) return Promise.resolve([]);
  return db.emailActivity.findMany({
    where: { projectId, emailId: { in: emailIds } },
    orderBy: [{ occurredAt: "asc" }, { id: "asc" }],
  });
}

/**
 * A page of the messages received from the contact (email.received: the contact's by its id, or by the address of
 * their From header), newest first, after `before`.
 */
export async function pageReceivedFrom(
  db: Db,
  contact: ExportedContact,
  before: Position | undefined,
  limit: number,
): Promise<ActivityRow[]> {
  const after = before ? Prisma.sql`AND (a.occurred_at, a.id) < (${before.at}, ${before.id}::uuid)` : Prisma.empty;
  return db.$queryRaw<ActivityRow[]>`
    SELECT a.id::text AS id, a.project_id::text AS "projectId", a.email_id::text AS "emailId", a.contact_id::text AS "contactId",
      a.type, a.recipient, a.url, a.reason, a.campaign_id::text AS "campaignId", a.workflow_id::text AS "workflowId", a.category,
      a.occurred_at AS "occurredAt", a.subject, a.sender, a.in_reply_to_email_id::text AS "inReplyToEmailId"
    FROM email_activity a
    WHERE a.project_id = ${contact.projectId}::uuid AND a.type = 'email.received'
      AND (a.contact_id = ${contact.contactId}::uuid OR (${contact.email} <> '' AND a.sender IS NOT NULL AND lower(a.sender) = ${contact.email}))
      ${after}
    ORDER BY a.occurred_at DESC, a.id DESC
    LIMIT ${limit}`;
}
