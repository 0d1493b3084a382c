import type { Db } from "./client.js";
import type { Email, Prisma } from "./generated/client.js";

export type EmailRow = Email;

export interface NewEmailRow {
  id: string;
  projectId: string;
  contactId: string | null;
  idempotencyKey: string | null;
  toEmail: string;
  toName: string | null;
  fromEmail: string;
  fromName: string | null;
  replyTo: string | null;
  subject: string;
  html: string;
  headers: Record<string, string>;
  attachments: StoredAttachment[];
  listUnsubscribe: { url: string; mailto?: string } | null;
  templateId: string | null;
  campaignId: string | null;
  workflowId: string | null;
  category: string;
  messageId: string;
}

/** An attachment as the emails table keeps it (jsonb): the content in base64. */
export interface StoredAttachment {
  filename: string;
  contentType: string;
  content: string;
}

/** A transaction's client, for the writes that go with an outbox row. */
export type Tx = Prisma.TransactionClient;

/**
 * Stores a new email, or finds the one enqueued before with the same idempotency key:
 * one statement, so two calls racing with one key both answer the same id.
 */
export async function insertEmail(db: Db | Tx, row: NewEmailRow): Promise<{ id: string; created: boolean }> {
  const inserted = await db.$queryRaw<Array<{ id: string }>>`
    INSERT INTO emails (id, project_id, contact_id, idempotency_key, to_email, to_name, from_email, from_name, reply_to,
      subject, html, headers, attachments, list_unsubscribe, template_id, campaign_id, workflow_id, category, message_id)
    VALUES (${row.id}::uuid, ${row.projectId}::uuid, ${row.contactId}::uuid, ${row.idempotencyKey}, ${row.toEmail}, ${row.toName},
      ${row.fromEmail}, ${row.fromName}, ${row.replyTo}, ${row.subject}, ${row.html}, ${JSON.stringify(row.headers)}::jsonb,
      ${JSON.stringify(row.attachments)}::jsonb, ${row.listUnsubscribe === null ? null : JSON.stringify(row.listUnsubscribe)}::jsonb,
      ${row.templateId}::uuid, ${row.campaignId}::uuid, ${row.workflowId}::uuid, ${row.category}, ${row.messageId})
    ON CONFLICT (project_id, idempotency_key) DO NOTHING
    RETURNING id::text AS id`;
  if (inserted[0]) return { id: inserted[0].id, created: true };
  const existing = await db.email.findFirst({
    where: { projectId: row.projectId, idempotencyKey: row.idempotencyKey },
    select: { id: true },
  });
  if (!existing) throw new Error("an email conflicted on its idempotency key and cannot be found");
  return { id: existing.id, created: false };
}

export const findEmail = (db: Db, projectId: string, id: string): Promise<EmailRow | null> =>
  db.email.findFirst({ where: { projectId, id } });

/** Which of these (project, address) pairs are suppressed, as `project address` strings. */
export async function suppressedAmong(db: Db, rows: ReadonlyArray<{ projectId: string; toEmail: string }>): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  const found = await db.suppression.findMany({
    where: {
      projectId: { in: [...new Set(rows.map((row) => row.projectId))] },
      email: { in: [...new Set(rows.map((row) => row.toEmail))] },
    },
    select: { projectId: true, email: true },
  });
  return new Set(found.map((row) => `${row.projectId} ${row.email}`));
}

/** Records that the project no longer sends to the address; a second bounce keeps the first record. */
export async function suppress(
  tx: Tx,
  row: { projectId: string; email: string; reason: "bounce" | "complaint"; detail: string; emailId: string },
) {
  await tx.$executeRaw`
    INSERT INTO suppressions (project_id, email, reason, detail, email_id)
    VALUES (${row.projectId}::uuid, ${row.email}, ${row.reason}, ${row.detail}, ${row.emailId}::uuid)
    ON CONFLICT (project_id, email) DO NOTHING`;
}

/**
 * Claims up to `limit` due emails for `leaseMs`: PENDING ones whose time has come, and
 * SENDING ones whose lease lapsed (their dispatcher died or stalled mid-send). One
 * statement: replicas skip each other's rows (SKIP LOCKED), and a claimed row is
 * invisible to them until its lease lapses. Each claim counts as an attempt, so an email
 * whose sending kills its process cannot be claimed for ever.
 */
export function claimDueEmails(db: Db, leaseMs: number, limit: number): Promise<EmailRow[]> {
  return db.$queryRaw<EmailRow[]>`
    UPDATE emails SET status = 'SENDING', attempts = attempts + 1, updated_at = now(),
      locked_until = now() + make_interval(secs => ${leaseMs / 1000}::double precision)
    WHERE id IN (
      SELECT id FROM emails
      WHERE (status = 'PENDING' AND next_attempt_at <= now()) OR (status = 'SENDING' AND locked_until < now())
      ORDER BY next_attempt_at
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    )
    RETURNING id::text AS id, project_id::text AS "projectId", contact_id::text AS "contactId", idempotency_key AS "idempotencyKey",
      to_email AS "toEmail", to_name AS "toName", from_email AS "fromEmail", from_name AS "fromName", reply_to AS "replyTo",
      subject, html, headers, attachments, list_unsubscribe AS "listUnsubscribe", template_id::text AS "templateId",
      campaign_id::text AS "campaignId", workflow_id::text AS "workflowId", category, status, attempts,
      next_attempt_at AS "nextAttemptAt", locked_until AS "lockedUntil", message_id AS "messageId",
      provider_message_id AS "providerMessageId", provider_response AS "providerResponse", last_error AS "lastError",
      sent_at AS "sentAt", created_at AS "createdAt", updated_at AS "updatedAt"`;
}

/** Puts claimed emails back untried (their project's rate is used up): the claim does not count as an attempt. */
export async function releaseEmails(db: Db, ids: readonly string[], delayMs: number): Promise<void> {
  if (ids.length === 0) return;
  await db.$executeRaw`
    UPDATE emails SET status = 'PENDING', attempts = greatest(attempts - 1, 0), locked_until = NULL, updated_at = now(),
      next_attempt_at = now() + make_interval(secs => ${delayMs / 1000}::double precision)
    WHERE id = ANY(${ids}::uuid[]) AND status = 'SENDING'`;
}

export type SendingOutcome =
  | { status: "SENT"; providerMessageId: string; providerResponse: string; sentAt: Date }
  | { status: "PENDING"; lastError: string; nextAttemptAt: Date }
  | { status: "BOUNCED" | "FAILED"; lastError: string };

/**
 * Moves a SENDING email to its outcome; false when it is no longer SENDING (another
 * dispatcher took it over after its lease lapsed and finished first), in which case the
 * caller writes no event: each transition is recorded once.
 */
export async function finishSending(tx: Tx, id: string, outcome: SendingOutcome): Promise<boolean> {
  const now = new Date();
  const data: Prisma.EmailUpdateManyMutationInput =
    outcome.status === "SENT"
      ? { ...outcome, lockedUntil: null, lastError: null, updatedAt: now }
      : { ...outcome, lockedUntil: null, updatedAt: now };
  // A success also ends an email that another dispatcher put back PENDING meanwhile: it was sent, and must not be sent again.
  const from = outcome.status === "SENT" ? ["SENDING", "PENDING"] : ["SENDING"];
  const { count } = await tx.email.updateMany({ where: { id, status: { in: from } }, data });
  return count === 1;
}
