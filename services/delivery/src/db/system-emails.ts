import type { Db } from "./client.js";

/** A claimed account email, as the system mail sender sends it. */
export interface SystemEmailRow {
  id: string;
  kind: string;
  toEmail: string;
  subject: string;
  /** Null only for an email whose body was erased: it is never claimed. */
  text: string;
  attempts: number;
  expiresAt: Date;
  messageId: string;
}

export interface NewSystemEmail {
  id: string;
  idempotencyKey: string;
  kind: string;
  toEmail: string;
  subject: string;
  text: string;
  expiresAt: Date;
  messageId: string;
}

/** Stores an account email, or answers the one stored earlier under its idempotency key. */
export async function insertSystemEmail(db: Db, row: NewSystemEmail): Promise<{ id: string; created: boolean }> {
  const inserted = await db.$queryRaw<Array<{ id: string }>>`
    INSERT INTO system_emails (id, idempotency_key, kind, to_email, subject, text, expires_at, message_id)
    VALUES (${row.id}::uuid, ${row.idempotencyKey}, ${row.kind}, ${row.toEmail}, ${row.subject}, ${row.text}, ${row.expiresAt}, ${row.messageId})
    ON CONFLICT (idempotency_key) DO NOTHING
    RETURNING id::text AS id`;
  if (inserted[0]) return { id: inserted[0].id, created: true };
  const earlier = await db.systemEmail.findUnique({ where: { idempotencyKey: row.idempotencyKey }, select: { id: true } });
  if (!earlier) throw new Error("a system email conflicted on its idempotency key and cannot be found");
  return { id: earlier.id, created: false };
}

/**
 * Claims due account emails for `leaseMs`, as the send queue claims its own (db/emails.ts): PENDING ones
 * whose time has come and SENDING ones whose lease lapsed, skipping other replicas' rows. A claim counts
 * as an attempt.
 */
export function claimDueSystemEmails(db: Db, leaseMs: number, limit: number): Promise<SystemEmailRow[]> {
  return db.$queryRaw<SystemEmailRow[]>`
    UPDATE system_emails SET status = 'SENDING', attempts = attempts + 1, updated_at = now(),
      locked_until = now() + make_interval(secs => ${leaseMs / 1000}::double precision)
    WHERE id IN (
      SELECT id FROM system_emails
      WHERE (status = 'PENDING' AND next_attempt_at <= now()) OR (status = 'SENDING' AND locked_until < now())
      ORDER BY next_attempt_at LIMIT ${limit} FOR UPDATE SKIP LOCKED
    )
    RETURNING id::text AS id, kind, to_email AS "toEmail", subject, text, attempts, expires_at AS "expiresAt", message_id AS "messageId"`;
}

/** Sent: the body, with its one-time link, is erased. */
export async function markSystemEmailSent(db: Db, id: string, providerResponse: string, sentAt: Date): Promise<void> {
  await db.$executeRaw`
    UPDATE system_emails SET status = 'SENT', text = NULL, provider_response = ${providerResponse}, sent_at = ${sentAt},
      last_error = NULL, locked_until = NULL, updated_at = now()
    WHERE id = ${id}::uuid AND status = 'SENDING'`;
}

/** Failed for good: the body is erased as well; nothing will send it. */
export async function markSystemEmailFailed(db: Db, id: string, lastError: string): Promise<void> {
  await db.$executeRaw`
    UPDATE system_emails SET status = 'FAILED', text = NULL, last_error = ${lastError}, locked_until = NULL, updated_at = now()
    WHERE id = ${id}::uuid AND status = 'SENDING'`;
}

/** A temporary failure: tried again at `nextAttemptAt`. */
export async function deferSystemEmail(db: Db, id: string, lastError: string, nextAttemptAt: Date): Promise<void> {
  await db.$executeRaw`
    UPDATE system_emails SET status = 'PENDING', last_error = ${lastError}, next_attempt_at = ${nextAttemptAt},
      locked_until = NULL, updated_at = now()
    WHERE id = ${id}::uuid AND status = 'SENDING'`;
}

/**
 * Emails whose link expired before they could be sent (no relay configured, or a relay away for
 * longer than the link lives): failed, and their bodies erased. Answers how many.
 */
export async function failExpiredSystemEmails(db: Db, now: Date): Promise<number> {
  return db.$executeRaw`
    UPDATE system_emails SET status = 'FAILED', text = NULL, last_error = coalesce(last_error, 'expired before it could be sent'),
      locked_until = NULL, updated_at = now()
    WHERE status = 'PENDING' AND expires_at <= ${now}`;
}
