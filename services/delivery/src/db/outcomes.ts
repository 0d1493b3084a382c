import type pg from "pg";
import type { EmailActivityEvent } from "../events/email-activity-outbox.js";
import type { SendingOutcome } from "./emails.js";

/** One sending outcome to record: the status change, its event, and the suppression a bounce adds. */
export interface OutcomeWrite {
  emailId: string;
  outcome: SendingOutcome;
  event: EmailActivityEvent;
  suppress?: { projectId: string; email: string; detail: string };
}

/**
 * Records many outcomes in one transaction of four statements, on pg directly: the
 * dispatcher's hot path, where a Prisma transaction per email cost more CPU than the send.
 * Each email moves only from SENDING (or, for a success, from PENDING too: another
 * dispatcher put it back after its lease lapsed, but it was sent); an email no longer in
 * those states was finished by another dispatcher, and its event is not written again.
 * Answers the ids that moved.
 */
export async function recordOutcomes(pool: pg.Pool, writes: readonly OutcomeWrite[]): Promise<Set<string>> {
  if (writes.length === 0) return new Set();
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const sent = (write: OutcomeWrite) => (write.outcome.status === "SENT" ? write.outcome : undefined);
    const pending = (write: OutcomeWrite) => (write.outcome.status === "PENDING" ? write.outcome : undefined);
    const failure = (write: OutcomeWrite) => (write.outcome.status === "SENT" ? null : write.outcome.lastError);
    const { rows } = await client.query<{ id: string }>(
      `UPDATE emails e SET
         status = v.status,
         provider_message_id = CASE WHEN v.status = 'SENT' THEN v.provider_message_id ELSE e.provider_message_id END,
         provider_response = CASE WHEN v.status = 'SENT' THEN v.provider_response ELSE e.provider_response END,
         sent_at = CASE WHEN v.status = 'SENT' THEN v.sent_at ELSE e.sent_at END,
         next_attempt_at = coalesce(v.next_attempt_at, e.next_attempt_at),
         last_error = v.last_error,
         locked_until = NULL,
         updated_at = now()
       FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::timestamptz[], $7::text[])
         AS v(id, status, provider_message_id, provider_response, sent_at, next_attempt_at, last_error)
       WHERE e.id = v.id AND (e.status = 'SENDING' OR (v.status = 'SENT' AND e.status = 'PENDING'))
       RETURNING e.id::text AS id`,
      [
        writes.map((write) => write.emailId),
        writes.map((write) => write.outcome.status),
        writes.map((write) => sent(write)?.providerMessageId ?? null),
        writes.map((write) => sent(write)?.providerResponse ?? null),
        writes.map((write) => sent(write)?.sentAt ?? null),
        writes.map((write) => pending(write)?.nextAttemptAt ?? null),
        writes.map(failure),
      ],
    );
    const moved = new Set(rows.map((row) => row.id));
    const recorded = writes.filter((write) => moved.has(write.emailId));
    const suppressions = recorded.filter((write) => write.suppress !== undefined);
    if (suppressions.length > 0) {
      await client.query(
        `INSERT INTO suppressions (project_id, email, reason, detail, email_id)
         SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::uuid[])
         ON CONFLICT (project_id, email) DO NOTHING`,
        [
          suppressions.map((write) => write.suppress?.projectId),
          suppressions.map((write) => write.suppress?.email),
          suppressions.map(() => "bounce"),
          suppressions.map((write) => write.suppress?.detail),
          suppressions.map((write) => write.emailId),
        ],
      );
    }
    if (recorded.length > 0) {
      const events = recorded.map((write) => write.event);
      await client.query(
        `INSERT INTO outbox_events (event_id, topic, key, payload, headers)
         SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::bytea[], $5::jsonb[])`,
        [
          events.map((event) => event.outbox.eventId),
          events.map((event) => event.outbox.topic),
          events.map((event) => event.outbox.key),
          events.map((event) => Buffer.from(event.outbox.payload)),
          events.map((event) => event.outbox.headers),
        ],
      );
      await client.query(
        `INSERT INTO email_activity (id, project_id, email_id, contact_id, type, recipient, url, reason, campaign_id, workflow_id, category, occurred_at)
         SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::text[], $6::text[], $7::text[], $8::text[],
           $9::uuid[], $10::uuid[], $11::text[], $12::timestamptz[])`,
        [
          events.map((event) => event.activity.id),
          events.map((event) => event.activity.projectId),
          events.map((event) => event.activity.emailId),
          events.map((event) => event.activity.contactId),
          events.map((event) => event.activity.type),
          events.map((event) => event.activity.recipient),
          events.map((event) => event.activity.url),
          events.map((event) => event.activity.reason),
          events.map((event) => event.activity.campaignId),
          events.map((event) => event.activity.workflowId),
          events.map((event) => event.activity.category),
          events.map((event) => event.activity.occurredAt),
        ],
      );
    }
    await client.query("COMMIT");
    return moved;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}
