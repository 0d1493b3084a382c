import type { EmailActivityFacts } from "../events/email-activity-outbox.js";
import type { TrackingMode } from "../tracking/html-tracking.js";
import type { Db } from "./client.js";
import type { Tx } from "./emails.js";

/** The email's facts for its activity events, and whether this is its first open. */
export interface Engagement {
  email: EmailActivityFacts;
  firstOpen: boolean;
}

/**
 * Records an open (or, with `click`, a click, which implies an open) on the email: the
 * first open's time, the first click's time, and the status, moved forward only (SENT and
 * DELIVERED to OPENED, and to CLICKED on a click; a bounced or failed email keeps its
 * status). Undefined when the project has no such email (deleted since).
 */
export async function recordEngagement(tx: Tx, projectId: string, emailId: string, click: boolean): Promise<Engagement | undefined> {
  const reached = click ? ["SENT", "DELIVERED", "OPENED"] : ["SENT", "DELIVERED"];
  const rows = await tx.$queryRaw<Array<EmailActivityFacts & { firstOpen: boolean }>>`
    WITH before AS (
      SELECT project_id, id, created_at, opened_at FROM emails WHERE id = ${emailId}::uuid AND project_id = ${projectId}::uuid FOR UPDATE
    )
    UPDATE emails SET
      opened_at = coalesce(emails.opened_at, now()),
      clicked_at = CASE WHEN ${click} THEN coalesce(emails.clicked_at, now()) ELSE emails.clicked_at END,
      status = CASE WHEN emails.status = ANY(${reached}::text[]) THEN ${click ? "CLICKED" : "OPENED"} ELSE emails.status END,
      updated_at = now()
    FROM before WHERE emails.project_id = before.project_id AND emails.id = before.id AND emails.created_at = before.created_at
    RETURNING emails.id::text AS id, emails.project_id::text AS "projectId", emails.contact_id::text AS "contactId",
      emails.to_email AS "toEmail", emails.category, emails.campaign_id::text AS "campaignId",
      emails.workflow_id::text AS "workflowId", emails.message_id AS "messageId", emails.attempts,
      before.opened_at IS NULL AS "firstOpen"`;
  const [row] = rows;
  if (!row) return undefined;
  const { firstOpen, ...email } = row;
  return { email, firstOpen };
}

/** The email's facts for an activity event of its own (an unsubscribe through its link); undefined when it was deleted since. */
export async function findEmailFacts(tx: Tx, projectId: string, emailId: string): Promise<EmailActivityFacts | undefined> {
  const [row] = await tx.$queryRaw<EmailActivityFacts[]>`
    SELECT id::text AS id, project_id::text AS "projectId", contact_id::text AS "contactId", to_email AS "toEmail", category,
      campaign_id::text AS "campaignId", workflow_id::text AS "workflowId", message_id AS "messageId", attempts
    FROM emails WHERE id = ${emailId}::uuid AND project_id = ${projectId}::uuid`;
  return row;
}

/** Whether the email a link was signed for still exists (a click on one that does not must not redirect). */
export async function emailExists(db: Db, projectId: string, emailId: string): Promise<boolean> {
  const rows = await db.$queryRaw<unknown[]>`SELECT 1 FROM emails WHERE id = ${emailId}::uuid AND project_id = ${projectId}::uuid`;
  return rows.length > 0;
}

export async function findTrackingMode(db: Db, projectId: string): Promise<TrackingMode | undefined> {
  const row = await db.projectSettings.findUnique({ where: { projectId }, select: { trackingMode: true } });
  return row?.trackingMode as TrackingMode | undefined;
}

export async function saveTrackingMode(db: Db, projectId: string, mode: TrackingMode): Promise<void> {
  await db.projectSettings.upsert({
    where: { projectId },
    create: { projectId, trackingMode: mode },
    update: { trackingMode: mode, updatedAt: new Date() },
  });
}
