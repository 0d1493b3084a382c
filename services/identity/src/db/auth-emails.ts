import type { AuthEmailContent } from "../domain/auth-email-content.js";
import type { Tx } from "./client.js";

/**
 * Puts an email identity sends (verification, reset, invitation) in auth_emails, in
 * the transaction that made its token, so it is never lost. Until a delivery
 * service sends these, the table is the dev outbox that tests and operators read.
 */
export async function queueAuthEmail(tx: Tx, to: string, content: AuthEmailContent): Promise<{ id: string }> {
  return tx.authEmail.create({ data: { to, kind: content.kind, subject: content.subject, text: content.text }, select: { id: true } });
}
