import type { AddressHash } from "../domain/address-hash.js";
import type { EmailActivityFacts } from "../events/email-activity-outbox.js";
import type { ProviderEmailEvent } from "../feedback/email-events.js";
import type { Tx } from "./emails.js";

/** Where each event moves an email's status from, and to; a later event never moves it back (ARCHITECTURE.md "Sending"). */
const transitions: Record<ProviderEmailEvent["type"], { from: string[]; to: string } | undefined> = {
  "email.delivery": { from: ["SENT"], to: "DELIVERED" },
  "email.bounce": { from: ["SENT", "DELIVERED"], to: "BOUNCED" },
  "email.complaint": { from: ["SENT", "DELIVERED", "OPENED", "CLICKED", "BOUNCED"], to: "COMPLAINED" },
  "email.deferred": undefined,
};

/** Records a provider's report as applied; false when it was before (SNS and SMTP deliver at least once). */
export async function recordNotification(tx: Tx, consumer: string, notificationId: string): Promise<boolean> {
  const inserted = await tx.$executeRaw`
    INSERT INTO processed_events (consumer, event_id) VALUES (${consumer}, ${notificationId}) ON CONFLICT DO NOTHING`;
  return inserted > 0;
}

/**
 * Moves the email a provider's event is about forward (see transitions) and answers its facts
 * for the activity event; undefined when no email here has the event's provider message id
 * (nor its email id). The email's own project scopes everything that follows.
 */
export async function applyProviderEvent(
  tx: Tx,
  event: ProviderEmailEvent,
  emailId: string | undefined,
): Promise<EmailActivityFacts | undefined> {
  const transition = transitions[event.type];
  const rows = await tx.$queryRaw<EmailActivityFacts[]>`
    WITH target AS (
      SELECT project_id, id, created_at FROM emails
      -- By our id, only an email handed over (the predicate of emails_id_idx): a PENDING one is not with any provider.
      WHERE provider_message_id = ${event.providerMessageId ?? null} OR (id = ${emailId ?? null}::uuid AND status <> 'PENDING')
      ORDER BY provider_message_id = ${event.providerMessageId ?? null} DESC NULLS LAST
      LIMIT 1
      FOR UPDATE
    )
    UPDATE emails SET
      status = CASE WHEN emails.status = ANY(${transition?.from ?? []}::text[]) THEN ${transition?.to ?? ""} ELSE emails.status END,
      updated_at = now()
    FROM target WHERE emails.project_id = target.project_id AND emails.id = target.id AND emails.created_at = target.created_at
    RETURNING emails.id::text AS id, emails.project_id::text AS "projectId", emails.contact_id::text AS "contactId",
      emails.to_email AS "toEmail", emails.category, emails.campaign_id::text AS "campaignId",
      emails.workflow_id::text AS "workflowId", emails.message_id AS "messageId", emails.attempts`;
  return rows[0];
}

/**
 * The project stops sending to these addresses: `bounce` or `complaint`, kept with the provider's words and the keyed
 * hash of each address. An address already suppressed (by itself, or by its hash alone after its contact's erasure) stays as it was.
 */
export async function suppressAddresses(
  tx: Tx,
  addressHash: AddressHash,
  email: EmailActivityFacts,
  addresses: readonly string[],
  reason: "bounce" | "complaint",
  detail: string,
): Promise<void> {
  const hashes = addresses.map((address) => addressHash(address).toString("hex"));
  await tx.$executeRaw`
    INSERT INTO suppressions (project_id, email, email_hash, reason, detail, email_id)
    SELECT ${email.projectId}::uuid, a.address, decode(a.hash, 'hex'), ${reason}, ${detail}, ${email.id}::uuid
    FROM unnest(${[...addresses]}::text[], ${hashes}::text[]) AS a(address, hash)
    ON CONFLICT DO NOTHING`;
}
