import type { ContactErasure } from "@herald/kafka";
import type { AddressHash } from "../domain/address-hash.js";
import type { Tx } from "./emails.js";

/** Why an email still queued for an erased contact ends FAILED. */
export const erasedRecipientError = "The recipient was erased";

/**
 * Forgets an erased contact in the project's emails, their activity (inbound messages from it included) and the
 * suppressions of its emails, keeping each row with its status, category, campaign, workflow and times, so that
 * analytics, campaign counters and the activity feed keep their totals. An email is the contact's when it names the
 * contact or was sent to its address (a workflow's fixed `to`, a campaign's test send); an email still queued for it
 * fails instead of going out. A suppression of any address it was sent mail at keeps only the keyed hash of the address
 * (forgetSuppressedAddresses). Idempotent: a second run finds nothing left that names the contact.
 */
export async function eraseContactFromDelivery(
  tx: Tx,
  addressHash: AddressHash,
  erasure: ContactErasure,
): Promise<{ emails: number; activity: number; suppressions: number }> {
  const { projectId, contactId } = erasure;
  const email = erasure.email.toLowerCase();
  // The addresses the contact was sent mail at: its last one, and any earlier one its emails name.
  const earlier = await tx.$queryRaw<Array<{ address: string }>>`
    SELECT DISTINCT to_email AS address FROM emails WHERE project_id = ${projectId}::uuid AND contact_id = ${contactId}::uuid AND to_email <> ''`;
  const addresses = [...new Set([...(email ? [email] : []), ...earlier.map((row) => row.address)])];
  // The emails' idempotency keys go too: a caller's key may hold anything, the address included.
  const erased = await tx.$queryRaw<Array<{ id: string }>>`
    WITH theirs AS (
      SELECT id, created_at, idempotency_key FROM emails
      WHERE project_id = ${projectId}::uuid AND (contact_id = ${contactId}::uuid OR (${email} <> '' AND to_email = ${email}))
      FOR UPDATE
    ),
    keys AS (
      DELETE FROM email_idempotency_keys k USING theirs
      WHERE k.project_id = ${projectId}::uuid AND k.idempotency_key = theirs.idempotency_key
    )
    UPDATE emails e SET
      contact_id = NULL, to_email = '', to_name = NULL, subject = '', html = '', headers = '{}', attachments = '[]',
      list_unsubscribe = NULL, idempotency_key = NULL, provider_response = NULL,
      last_error = CASE WHEN e.status IN ('PENDING', 'SENDING') THEN ${erasedRecipientError} ELSE NULL END,
      status = CASE WHEN e.status IN ('PENDING', 'SENDING') THEN 'FAILED' ELSE e.status END,
      locked_until = NULL, updated_at = now()
    FROM theirs WHERE e.project_id = ${projectId}::uuid AND e.id = theirs.id AND e.created_at = theirs.created_at
    RETURNING e.id::text AS id`;
  const emailIds = erased.map((row) => row.id);
  // Keeps the type and time (the counters and the feed's totals); drops what names the person: the address, the
  // link followed, the provider's answer (which quotes the address), an inbound message's subject and sender.
  const activity = await tx.$executeRaw`
    UPDATE email_activity SET contact_id = NULL, recipient = '', url = NULL, reason = NULL, subject = NULL, sender = NULL
    WHERE project_id = ${projectId}::uuid
      AND (contact_id = ${contactId}::uuid OR email_id = ANY(${emailIds}::uuid[])
        OR (${email} <> '' AND (recipient = ${email} OR (sender IS NOT NULL AND lower(sender) = ${email}))))`;
  const suppressions = await forgetSuppressedAddresses(tx, addressHash, projectId, addresses);
  return { emails: emailIds.length, activity, suppressions };
}

/**
 * A suppression of one of these addresses keeps only the keyed hash of it, so that the address stays suppressed
 * without being stored; the provider's answer kept with it (which quotes the address) goes too. A row not hashed yet
 * (an older version wrote it) is hashed here, unless the hash is already suppressed, which makes it a duplicate.
 */
async function forgetSuppressedAddresses(tx: Tx, addressHash: AddressHash, projectId: string, addresses: string[]): Promise<number> {
  if (addresses.length === 0) return 0;
  const hashes = addresses.map((address) => addressHash(address).toString("hex"));
  await tx.$executeRaw`
    DELETE FROM suppressions s USING unnest(${addresses}::text[], ${hashes}::text[]) AS a(address, hash)
    WHERE s.project_id = ${projectId}::uuid AND s.email = a.address AND s.email_hash IS NULL
      AND EXISTS (SELECT 1 FROM suppressions t WHERE t.project_id = s.project_id AND t.email_hash = decode(a.hash, 'hex'))`;
  return tx.$executeRaw`
    UPDATE suppressions s SET email = NULL, detail = NULL, email_hash = coalesce(s.email_hash, decode(a.hash, 'hex'))
    FROM unnest(${addresses}::text[], ${hashes}::text[]) AS a(address, hash)
    WHERE s.project_id = ${projectId}::uuid AND (s.email_hash = decode(a.hash, 'hex') OR s.email = a.address)
      AND (s.email IS NOT NULL OR s.detail IS NOT NULL)`;
}
