import type pg from "pg";
import type { EmailActivityEvent } from "../events/email-activity-outbox.js";
import { createPlannedOncePool } from "./client.js";
import type { SendingOutcome } from "./emails.js";

/**
 * The connection outcomes are recorded on: one, since the dispatcher writes one batch at a time, and
 * kept for it so that a write never queues behind claims or the outbox relay. Its statement is planned
 * once, and only as a nested loop over the primary key, the only index its conditions can use (so also
 * when the plan is made on an empty month: docs/decisions.md "Which tables are partitioned"):
 * - Left to choose, PostgreSQL planned it anew for every write: the generic plan's estimate of ten rows
 *   from each array looked costlier than a plan for the one outcome at hand, and planning cost more than
 *   running it (0.55 ms of 0.9).
 * - Planned while the emails table was small (a new project, or statistics from before a burst), the plan
 *   was a hash join over a sequential scan of every email; autovacuum re-analyzes only later, and in a
 *   20,000-email benchmark the writes averaged 21 ms each, most of the database's CPU.
 * The plan this leaves is the one a custom plan picks for a large table whatever the batch: each email
 * through emails_pkey, (project_id, id, created_at), in its month's partition; the inserts joined to the
 * few emails that moved.
 */
export const createOutcomesPool = (databaseUrl: string, schema: string, onError: (error: Error) => void): pg.Pool =>
  createPlannedOncePool(databaseUrl, schema, onError);

/** One sending outcome to record: the status change, its event, and the suppression a bounce adds. */
export interface OutcomeWrite {
  projectId: string;
  emailId: string;
  /** The email's created_at, its month's partition. */
  emailCreatedAt: Date;
  outcome: SendingOutcome;
  event: EmailActivityEvent;
  suppress?: { projectId: string; email: string; emailHash: Buffer; detail: string };
}

/**
 * Records many outcomes in ONE statement, on pg directly: the dispatcher's hot path, where a
 * Prisma transaction per email cost more CPU than the send. One statement is one round trip and
 * one commit, so a process killed after the relay accepted its emails has the shortest window in
 * which they are sent but not recorded (docs/decisions.md, "The email record is the queue").
 * Each email moves only from SENDING (or, for a success, from PENDING too: another dispatcher
 * put it back after its lease lapsed, but it was sent); an email no longer in those states was
 * finished by another dispatcher, and neither its event nor its suppression is written again.
 * Answers the ids that moved.
 */
export async function recordOutcomes(pool: pg.Pool, writes: readonly OutcomeWrite[]): Promise<Set<string>> {
  if (writes.length === 0) return new Set();
  const { rows } = await pool.query<{ id: string }>(outcomesStatement(writes));
  return new Set(rows.map((row) => row.id));
}

/** recordOutcomes's statement, a prepared one ("delivery_record_outcomes"), with its values. */
export function outcomesStatement(writes: readonly OutcomeWrite[]): pg.QueryConfig {
  const sent = (write: OutcomeWrite) => (write.outcome.status === "SENT" ? write.outcome : undefined);
  const pending = (write: OutcomeWrite) => (write.outcome.status === "PENDING" ? write.outcome : undefined);
  const failure = (write: OutcomeWrite) => (write.outcome.status === "SENT" ? null : write.outcome.lastError);
  const suppressions = writes.filter((write) => write.suppress !== undefined);
  const outbox = writes.map((write) => write.event.outbox);
  const activity = writes.map((write) => write.event.activity);
  return {
    name: "delivery_record_outcomes",
    text: `
    WITH v AS (
      SELECT * FROM unnest($31::uuid[], $1::uuid[], $32::timestamptz[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::timestamptz[],
        $7::text[])
        AS v(project_id, id, created_at, status, provider_message_id, provider_response, sent_at, next_attempt_at, last_error)
    ),
    moved AS (
      UPDATE emails e SET
        status = v.status,
        provider_message_id = CASE WHEN v.status = 'SENT' THEN v.provider_message_id ELSE e.provider_message_id END,
        provider_response = CASE WHEN v.status = 'SENT' THEN v.provider_response ELSE e.provider_response END,
        sent_at = CASE WHEN v.status = 'SENT' THEN v.sent_at ELSE e.sent_at END,
        next_attempt_at = coalesce(v.next_attempt_at, e.next_attempt_at),
        last_error = v.last_error,
        locked_until = NULL,
        updated_at = now()
      FROM v
      -- A CASE, not an OR: from (e.status = 'SENDING' OR (... AND e.status = 'PENDING')) the planner derives a
      -- condition on status alone, and while its statistics still see few emails waiting (a burst just
      -- enqueued, or a new table) it scans every waiting email through the status index to find a few.
      WHERE e.project_id = v.project_id AND e.id = v.id AND e.created_at = v.created_at AND CASE WHEN v.status = 'SENT' THEN e.status IN ('SENDING', 'PENDING') ELSE e.status = 'SENDING' END
      RETURNING e.id
    ),
    suppressed AS (
      INSERT INTO suppressions (project_id, email, email_hash, reason, detail, email_id)
      SELECT s.project_id, s.email, s.email_hash, 'bounce', s.detail, s.email_id
      FROM unnest($8::uuid[], $9::text[], $10::text[], $11::uuid[], $30::bytea[]) AS s(project_id, email, detail, email_id, email_hash)
      JOIN moved ON moved.id = s.email_id
      -- Either the address or its hash (an erased contact's suppression keeps only the hash) already suppressed.
      ON CONFLICT DO NOTHING
    ),
    published AS (
      INSERT INTO outbox_events (event_id, topic, key, payload, headers)
      SELECT o.event_id, o.topic, o.key, o.payload, o.headers
      FROM unnest($12::uuid[], $13::text[], $14::text[], $15::bytea[], $16::jsonb[], $17::uuid[])
        AS o(event_id, topic, key, payload, headers, email_id)
      JOIN moved ON moved.id = o.email_id
    ),
    shown AS (
      INSERT INTO email_activity (id, project_id, email_id, contact_id, type, recipient, url, reason, campaign_id, workflow_id, category, occurred_at)
      SELECT a.*
      FROM unnest($18::uuid[], $19::uuid[], $20::uuid[], $21::uuid[], $22::text[], $23::text[], $24::text[], $25::text[],
        $26::uuid[], $27::uuid[], $28::text[], $29::timestamptz[])
        AS a(id, project_id, email_id, contact_id, type, recipient, url, reason, campaign_id, workflow_id, category, occurred_at)
      JOIN moved ON moved.id = a.email_id
    )
    SELECT id::text AS id FROM moved`,
    values: [
      writes.map((write) => write.emailId),
      writes.map((write) => write.outcome.status),
      writes.map((write) => sent(write)?.providerMessageId ?? null),
      writes.map((write) => sent(write)?.providerResponse ?? null),
      writes.map((write) => sent(write)?.sentAt ?? null),
      writes.map((write) => pending(write)?.nextAttemptAt ?? null),
      writes.map(failure),
      suppressions.map((write) => write.suppress?.projectId),
      suppressions.map((write) => write.suppress?.email),
      suppressions.map((write) => write.suppress?.detail),
      suppressions.map((write) => write.emailId),
      outbox.map((row) => row.eventId),
      outbox.map((row) => row.topic),
      outbox.map((row) => row.key),
      outbox.map((row) => Buffer.from(row.payload)),
      outbox.map((row) => row.headers),
      writes.map((write) => write.emailId),
      activity.map((row) => row.id),
      activity.map((row) => row.projectId),
      activity.map((row) => row.emailId),
      activity.map((row) => row.contactId),
      activity.map((row) => row.type),
      activity.map((row) => row.recipient),
      activity.map((row) => row.url),
      activity.map((row) => row.reason),
      activity.map((row) => row.campaignId),
      activity.map((row) => row.workflowId),
      activity.map((row) => row.category),
      activity.map((row) => row.occurredAt),
      suppressions.map((write) => write.suppress?.emailHash),
      writes.map((write) => write.projectId),
      writes.map((write) => write.emailCreatedAt),
    ],
  };
}
