import type { AuthEmailContent } from "../domain/auth-email-content.js";
import type { Db, Tx } from "./client.js";

/** An email waiting to be handed to delivery. */
export interface PendingAuthEmail {
  id: string;
  to: string;
  kind: string;
  subject: string;
  text: string;
  expiresAt: Date;
  attempts: number;
}

/**
 * Puts an email identity sends (verification, reset, invitation) in auth_emails, in the transaction that
 * made its token, so it is never lost: the hand-over (accounts/account-mail.ts) takes it to delivery.
 */
export async function queueAuthEmail(
  tx: Tx,
  to: string,
  content: AuthEmailContent,
  link: { tokenHash?: string; expiresAt: Date },
): Promise<{ id: string }> {
  return tx.authEmail.create({
    data: {
      to,
      kind: content.kind,
      subject: content.subject,
      text: content.text,
      tokenHash: link.tokenHash ?? null,
      expiresAt: link.expiresAt,
    },
    select: { id: true },
  });
}

/**
 * Claims emails due for a hand-over for `leaseMs` (a replica skips another's rows): those with a body that
 * were not handed over, whose link still works, and whose next attempt is due. A claim counts as an attempt.
 */
export function claimPendingAuthEmails(db: Db, leaseMs: number, limit: number, now: Date): Promise<PendingAuthEmail[]> {
  return db.$queryRaw<PendingAuthEmail[]>`
    UPDATE auth_emails SET attempts = attempts + 1,
      next_attempt_at = ${now}::timestamptz + make_interval(secs => ${leaseMs / 1000}::double precision)
    WHERE id IN (
      SELECT id FROM auth_emails
      WHERE next_attempt_at <= ${now} AND text IS NOT NULL AND handed_over_at IS NULL AND expires_at > ${now}
      ORDER BY next_attempt_at LIMIT ${limit} FOR UPDATE SKIP LOCKED
    )
    RETURNING id::text AS id, "to", kind::text AS kind, subject, text, expires_at AS "expiresAt", attempts`;
}

/** Delivery has the email: only its digest stays here. */
export async function markAuthEmailHandedOver(db: Db, id: string, now: Date): Promise<void> {
  await db.authEmail.updateMany({ where: { id }, data: { text: null, handedOverAt: now, lastError: null } });
}

export async function deferAuthEmail(db: Db, id: string, lastError: string, nextAttemptAt: Date): Promise<void> {
  await db.authEmail.updateMany({ where: { id, handedOverAt: null }, data: { lastError: lastError.slice(0, 1_000), nextAttemptAt } });
}

/** Emails whose link expired before delivery accepted them: given up, bodies erased. Answers how many. */
export async function failExpiredAuthEmails(db: Db, now: Date): Promise<number> {
  const { count } = await db.authEmail.updateMany({
    where: { text: { not: null }, handedOverAt: null, expiresAt: { lte: now } },
    data: { text: null, failedAt: now },
  });
  return count;
}
