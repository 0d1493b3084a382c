import type { ContactErasure } from "@herald/kafka";
import type { Tx } from "./emails.js";

/** Why an email still queued for an erased contact ends FAILED. */
export const erasedRecipientError = "The recipient was erased";

/**
 * Forgets an erased contact in the project's emails, their activity (inbound messages from it included) and the
 * suppressions of its emails, keeping each row with its status, category, campaign, workflow and times, so that
 * analytics, campaign counters and the activity feed keep their totals. An email is the contact's when it names the
 * contact or was sent to its address (a workflow's fixed `to`, a campaign's test send); an email still queued for it
 * fails instead of going out. Idempotent: a second run finds nothing left that names the contact.
 */
export async function eraseContactFromDelivery(tx: Tx, erasure: ContactErasure): Promise<{ emails: number; activity: number }> {
  const { projectId, contactId } = erasure;
  const email = erasure.email.toLowerCase();
  const erased = await tx.$queryRaw<Array<{ id: string }>>`
    UPDATE emails SET
      contact_id = NULL, to_email = '', to_name = NULL, subject = '', html = '', headers = '{}', attachments = '[]',
      list_unsubscribe = NULL, idempotency_key = NULL, provider_response = NULL,
      last_error = CASE WHEN status IN ('PENDING', 'SENDING') THEN ${erasedRecipientError} ELSE NULL END,
      status = CASE WHEN status IN ('PENDING', 'SENDING') THEN 'FAILED' ELSE status END,
      locked_until = NULL, updated_at = now()
    WHERE project_id = ${projectId}::uuid AND (contact_id = ${contactId}::uuid OR (${email} <> '' AND to_email = ${email}))
    RETURNING id::text AS id`;
  const emailIds = erased.map((row) => row.id);
  // Keeps the type and time (the counters and the feed's totals); drops what names the person: the address, the
  // link followed, the provider's answer (which quotes the address), an inbound message's subject and sender.
  const activity = await tx.$executeRaw`
    UPDATE email_activity SET contact_id = NULL, recipient = '', url = NULL, reason = NULL, subject = NULL, sender = NULL
    WHERE project_id = ${projectId}::uuid
      AND (contact_id = ${contactId}::uuid OR email_id = ANY(${emailIds}::uuid[])
        OR (${email} <> '' AND (recipient = ${email} OR (sender IS NOT NULL AND lower(sender) = ${email}))))`;
  // A suppression keeps its address, so that the address stays suppressed (a keyed hash in its place is not built yet,
  // docs/decisions.md "Erasing a contact"); the provider's answer stored with it may quote the address.
  await tx.$executeRaw`
    UPDATE suppressions SET detail = NULL
    WHERE project_id = ${projectId}::uuid AND detail IS NOT NULL AND (email_id = ANY(${emailIds}::uuid[])
      OR (${email} <> '' AND strpos(lower(detail), ${email}) > 0))`;
  return { emails: emailIds.length, activity };
}
