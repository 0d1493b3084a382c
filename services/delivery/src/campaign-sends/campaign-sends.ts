import { randomUUID } from "node:crypto";
import { validationFailed } from "@herald/errors";
import type pg from "pg";
import type { Db } from "../db/client.js";
import { domainOfAddress, type EmailInput, type MailboxInput, normaliseAddress } from "../domain/email-input.js";
import { isId, requireProjectId } from "../domain/ids.js";
import type { Emails } from "../emails/emails.js";
import { type LinkTokens, recipientLinks, withRecipientLinks } from "../links/link-tokens.js";
import { requireVerifiedSenderDomain } from "../sending-domains/sender-domain.js";

export type CampaignSends = ReturnType<typeof createCampaignSends>;

export const campaignBatchMax = 1_000;

export interface CampaignEmailInput {
  contactId: string;
  to: string;
  subject: string;
  html: string;
}

export interface CampaignBatch {
  campaignId: string;
  from: MailboxInput;
  replyTo?: MailboxInput;
  /** The strings campaigns rendered where the recipient's links go; delivery writes the signed links in their place. */
  markers: { unsubscribeUrl: string; subscribeUrl: string; manageUrl: string };
  emails: readonly CampaignEmailInput[];
}

export type CampaignEmailResult = { outcome: "enqueued" | "already-enqueued"; emailId: string } | { outcome: "suppressed" };

/** The queue's key of a campaign's email to one contact: a resumed fan-out finds it and enqueues nobody twice. */
export const campaignIdempotencyKey = (campaignId: string, contactId: string) => `campaign:${campaignId}:${contactId}`;

/**
 * The campaigns service's door to the send queue (proto CampaignSendsService): batches of
 * emails it rendered, stored through the same enqueue as /v1/send (tracking, List-Unsubscribe,
 * Message-ID, the dispatcher's nudge), each under its (campaign, contact) idempotency key.
 */
export function createCampaignSends(deps: { db: Db; pool: pg.Pool; emails: Emails; tokens: LinkTokens; publicUrl: string }) {
  const { db, pool } = deps;

  return {
    async checkSender(projectId: string, from: string): Promise<void> {
      requireProjectId(projectId);
      await requireVerifiedSenderDomain(db, projectId, domainOfAddress(from.trim()));
    },

    async enqueue(projectId: string, batch: CampaignBatch): Promise<CampaignEmailResult[]> {
      requireProjectId(projectId);
      if (!isId(batch.campaignId)) {
        throw validationFailed("campaign_id must be a campaign's uuid", [
          { field: "campaign_id", message: "must be a uuid", code: "invalid" },
        ]);
      }
      if (batch.emails.length > campaignBatchMax) {
        throw validationFailed(`at most ${campaignBatchMax} emails per call`, [
          { field: "emails", message: `must be at most ${campaignBatchMax}`, code: "too_big" },
        ]);
      }
      const bad = batch.emails.findIndex((email) => !isId(email.contactId));
      if (bad >= 0) {
        throw validationFailed("every campaign email names its contact", [
          { field: `emails[${bad}].contact_id`, message: "must be a contact's uuid", code: "invalid" },
        ]);
      }
      const suppressed = await deps.emails.suppressedAmong(
        batch.emails.map((email) => ({ projectId, toEmail: normaliseAddress(email.to) })),
      );
      const kept = batch.emails.filter((email) => !suppressed.has(`${projectId} ${normaliseAddress(email.to)}`));
      const inputs: EmailInput[] = kept.map((email) => {
        // The email's id chosen here, so that its unsubscribe link names it (an unsubscribe counts for the campaign).
        const id = randomUUID();
        const links = recipientLinks(deps.tokens, deps.publicUrl, projectId, email.contactId, id);
        return {
          id,
          idempotencyKey: campaignIdempotencyKey(batch.campaignId, email.contactId),
          contactId: email.contactId,
          to: { email: email.to },
          from: batch.from,
          ...(batch.replyTo ? { replyTo: batch.replyTo } : {}),
          subject: email.subject,
          html: withRecipientLinks(email.html, batch.markers, links),
          listUnsubscribe: { url: links.unsubscribeUrl },
          category: "CAMPAIGN",
          campaignId: batch.campaignId,
        };
      });
      const stored = inputs.length === 0 ? [] : await deps.emails.enqueueAll(projectId, inputs, { suppressionsChecked: true });
      const byContact = new Map(kept.map((email, index) => [email.contactId, stored[index]]));
      return batch.emails.map((email): CampaignEmailResult => {
        const result = byContact.get(email.contactId);
        if (!result) return { outcome: "suppressed" };
        return { outcome: result.created ? "enqueued" : "already-enqueued", emailId: result.id };
      });
    },

    /**
     * PENDING emails of the campaign end FAILED without being sent; a claimed (SENDING) one finishes its attempt.
     * The withdrawn ones give their place under the month's cap back (the month each was accepted in).
     */
    async withdraw(projectId: string, campaignId: string): Promise<number> {
      requireProjectId(projectId);
      if (!isId(campaignId)) return 0;
      const { rows } = await pool.query<{ withdrawn: string }>(
        `WITH withdrawn AS (
           UPDATE emails SET status = 'FAILED', last_error = 'Withdrawn: the campaign was cancelled', locked_until = NULL, updated_at = now()
           WHERE project_id = $1::uuid AND campaign_id = $2::uuid AND status = 'PENDING'
           RETURNING category, created_at
         ),
         given_back AS (
           UPDATE monthly_usage u SET used = greatest(u.used - w.count, 0)
           FROM (SELECT date_trunc('month', created_at AT TIME ZONE 'UTC')::date AS month, category, count(*) AS count
                 FROM withdrawn GROUP BY 1, 2) w
           WHERE u.project_id = $1::uuid AND u.month = w.month AND u.category = w.category
         )
         SELECT count(*)::text AS withdrawn FROM withdrawn`,
        [projectId, campaignId],
      );
      return Number(rows[0]?.withdrawn ?? 0);
    },

    async progress(projectId: string, campaignId: string): Promise<{ queued: number; total: number }> {
      requireProjectId(projectId);
      if (!isId(campaignId)) return { queued: 0, total: 0 };
      const { rows } = await pool.query<{ queued: string; total: string }>(
        `SELECT count(*) FILTER (WHERE status IN ('PENDING', 'SENDING')) AS queued, count(*) AS total
         FROM emails WHERE project_id = $1::uuid AND campaign_id = $2::uuid`,
        [projectId, campaignId],
      );
      return { queued: Number(rows[0]?.queued ?? 0), total: Number(rows[0]?.total ?? 0) };
    },
  };
}
