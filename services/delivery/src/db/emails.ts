import { oldestHolding } from "@herald/db";
import type pg from "pg";
import { firstBulkCursor } from "../domain/lanes.js";
import { createPlannedOncePool, type Db } from "./client.js";
import { type Email, Prisma } from "./generated/client.js";
import { capSql, thisMonthSql } from "./monthly-usage.js";

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
  /** The enqueuing call's trace (currentTraceParent), continued when the email is sent. */
  traceParent: string | null;
  /**
   * Stored claimed by its process's dispatcher for this long (SENDING, its first attempt), which sends it without a
   * claim (EnqueueClaims); unset: stored PENDING, for a claim to take.
   */
  leaseMs?: number;
}

/** What insertEmails answers for each row: its email, stored now or earlier (a repeated idempotency key). */
export interface StoredEmail {
  id: string;
  created: boolean;
  /** A row stored claimed (`leaseMs`), as stored. */
  claimed?: { createdAt: Date; lockedUntil: Date };
}

/** An attachment as the emails table keeps it (jsonb): the content in base64. */
export interface StoredAttachment {
  filename: string;
  contentType: string;
  content: string;
}

/** An email still queued or being sent: one a claim may take, and that retention keeps however old. */
export const unsentEmail = "status IN ('PENDING', 'SENDING')";
/** An email done with, sent or failed: the predicate of emails_done_idx, through which retention finds what it may expire. */
export const doneEmail = "status NOT IN ('PENDING', 'SENDING')";

/** A transaction's client, for the writes that go with an outbox row. */
export type Tx = Prisma.TransactionClient;

/**
 * Stores new emails, of any projects, in one statement (all or none), on pg directly: the
 * enqueue path of /v1/send and of campaigns. An email whose idempotency key its project
 * used before is not stored again: its answer is the earlier email's id, `created` false
 * (also when two calls race with one key: the key's row in email_idempotency_keys decides,
 * and only the emails whose key was taken here, or that have none, are stored). The same
 * statement counts the stored emails into the month's usage (monthly_usage), which the billing
 * caps bound, adding to its rows in (project, category) order as lockCapStandings locks them.
 */
export async function insertEmails(db: Pick<pg.Pool, "query">, rows: readonly NewEmailRow[]): Promise<StoredEmail[]> {
  const stored = await insertEmailsIf(db, rows, false);
  if (!stored) throw new Error("insertEmails stored nothing for a capped category it was not asked to refuse");
  return stored;
}

/**
 * insertEmails, unless one of the rows' (project, category) pairs has a billing cap: then nothing is stored and the
 * answer is undefined, for the caller to store them under the cap's lock (storeWithinCaps). The usual, uncapped call
 * is one statement.
 */
export const insertEmailsUnlessCapped = (db: Pick<pg.Pool, "query">, rows: readonly NewEmailRow[]): Promise<StoredEmail[] | undefined> =>
  insertEmailsIf(db, rows, true);

async function insertEmailsIf(
  db: Pick<pg.Pool, "query">,
  rows: readonly NewEmailRow[],
  unlessCapped: boolean,
): Promise<StoredEmail[] | undefined> {
  const column = <T>(pick: (row: NewEmailRow) => T) => rows.map(pick);
  const json = (value: unknown) => (value === null ? null : JSON.stringify(value));
  const { rows: inserted } = await db.query<{ id: string | null; createdAt: Date; lockedUntil: Date | null }>({
    name: "delivery_insert_emails",
    text: `WITH input AS (
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
         $10::text[], $11::text[], $12::jsonb[], $13::jsonb[], $14::jsonb[], $15::uuid[], $16::uuid[], $17::uuid[], $18::text[], $19::text[],
         $20::text[], $21::float8[])
         AS i(id, project_id, contact_id, idempotency_key, to_email, to_name, from_email, from_name, reply_to, subject, html, headers,
           attachments, list_unsubscribe, template_id, campaign_id, workflow_id, category, message_id, trace_parent, lease_secs)
     ),
     capped AS (
       SELECT 1 FROM (SELECT DISTINCT project_id, category FROM input) w JOIN billing_caps c ON c.project_id = w.project_id
       WHERE $22::boolean AND (${capSql("w.category")}) IS NOT NULL
     ),
     keyed AS (
       INSERT INTO email_idempotency_keys (project_id, idempotency_key, email_id)
       SELECT project_id, idempotency_key, id FROM input WHERE idempotency_key IS NOT NULL AND NOT EXISTS (SELECT 1 FROM capped)
       ON CONFLICT (project_id, idempotency_key) DO NOTHING
       RETURNING email_id
     ),
     inserted AS (
       INSERT INTO emails (id, project_id, contact_id, idempotency_key, to_email, to_name, from_email, from_name, reply_to,
         subject, html, headers, attachments, list_unsubscribe, template_id, campaign_id, workflow_id, category, message_id, trace_parent,
         status, attempts, locked_until)
       SELECT id, project_id, contact_id, idempotency_key, to_email, to_name, from_email, from_name, reply_to, subject, html, headers,
         attachments, list_unsubscribe, template_id, campaign_id, workflow_id, category, message_id, trace_parent,
         CASE WHEN lease_secs IS NULL THEN 'PENDING' ELSE 'SENDING' END, CASE WHEN lease_secs IS NULL THEN 0 ELSE 1 END,
         now() + make_interval(secs => lease_secs)
       FROM input WHERE (idempotency_key IS NULL OR id IN (SELECT email_id FROM keyed)) AND NOT EXISTS (SELECT 1 FROM capped)
       RETURNING id, project_id, category, created_at, locked_until
     ),
     counted AS (
       INSERT INTO monthly_usage (project_id, month, category, used)
       SELECT project_id, ${thisMonthSql}, category, count(*) FROM inserted
       WHERE project_id IS NOT NULL AND category IN ('TRANSACTIONAL', 'CAMPAIGN', 'WORKFLOW', 'INBOUND')
       GROUP BY project_id, category ORDER BY project_id, category
       ON CONFLICT (project_id, month, category) DO UPDATE SET used = monthly_usage.used + EXCLUDED.used
     )
     SELECT id::text AS id, created_at AS "createdAt", locked_until AS "lockedUntil" FROM inserted
     UNION ALL SELECT NULL, NULL, NULL WHERE EXISTS (SELECT 1 FROM capped)`,
    values: [
      column((row) => row.id),
      column((row) => row.projectId),
      column((row) => row.contactId),
      column((row) => row.idempotencyKey),
      column((row) => row.toEmail),
      column((row) => row.toName),
      column((row) => row.fromEmail),
      column((row) => row.fromName),
      column((row) => row.replyTo),
      column((row) => row.subject),
      column((row) => row.html),
      column((row) => json(row.headers)),
      column((row) => json(row.attachments)),
      column((row) => json(row.listUnsubscribe)),
      column((row) => row.templateId),
      column((row) => row.campaignId),
      column((row) => row.workflowId),
      column((row) => row.category),
      column((row) => row.messageId),
      column((row) => row.traceParent),
      column((row) => (row.leaseMs === undefined ? null : row.leaseMs / 1000)),
      unlessCapped,
    ],
  });
  const created = new Map<string, { createdAt: Date; lockedUntil: Date | null }>();
  for (const row of inserted) {
    // The row that says a category is capped: nothing was stored.
    if (row.id === null) return undefined;
    created.set(row.id, row);
  }
  const taken = rows.filter((row) => !created.has(row.id));
  const earlier = new Map<string, string>();
  if (taken.length > 0) {
    const { rows: found } = await db.query<{ id: string; projectId: string; key: string }>(
      `SELECT k.email_id::text AS id, k.project_id::text AS "projectId", k.idempotency_key AS key
       FROM email_idempotency_keys k JOIN unnest($1::uuid[], $2::text[]) AS t(project_id, idempotency_key)
         ON k.project_id = t.project_id AND k.idempotency_key = t.idempotency_key`,
      [taken.map((row) => row.projectId), taken.map((row) => row.idempotencyKey)],
    );
    for (const row of found) earlier.set(`${row.projectId} ${row.key}`, row.id);
  }
  return rows.map((row) => {
    const stored = created.get(row.id);
    if (stored) {
      const { createdAt, lockedUntil } = stored;
      return { id: row.id, created: true, ...(lockedUntil ? { claimed: { createdAt, lockedUntil } } : {}) };
    }
    const id = row.idempotencyKey === null ? undefined : earlier.get(`${row.projectId} ${row.idempotencyKey}`);
    if (!id) throw new Error("an email conflicted on its idempotency key and cannot be found");
    return { id, created: false };
  });
}

/** An email stored claimed (NewEmailRow's `leaseMs`), as its row reads: what the dispatcher sends without a claim. */
export function claimedRowOf(row: NewEmailRow, claimed: NonNullable<StoredEmail["claimed"]>): EmailRow {
  const { leaseMs: _lease, headers, attachments, listUnsubscribe, ...columns } = row;
  return {
    ...columns,
    headers,
    attachments: attachments as unknown as EmailRow["attachments"],
    listUnsubscribe: listUnsubscribe as EmailRow["listUnsubscribe"],
    status: "SENDING",
    attempts: 1,
    nextAttemptAt: claimed.createdAt,
    lockedUntil: claimed.lockedUntil,
    providerMessageId: null,
    providerResponse: null,
    lastError: null,
    sentAt: null,
    openedAt: null,
    clickedAt: null,
    contentExpiredAt: null,
    createdAt: claimed.createdAt,
    updatedAt: claimed.createdAt,
  };
}

/**
 * Deletes a project's emails with their idempotency keys: those done with through emails_done_idx, the unsent through
 * (status, locked_until), as no index of emails leads with project_id alone (docs/decisions.md "Which tables are
 * partitioned").
 */
export async function deleteProjectEmails(tx: Tx, projectId: string): Promise<void> {
  for (const state of [doneEmail, unsentEmail]) {
    await tx.$executeRaw`DELETE FROM emails WHERE project_id = ${projectId}::uuid AND ${Prisma.raw(state)}`;
  }
  await tx.emailIdempotencyKey.deleteMany({ where: { projectId } });
}

export const findEmail = (db: Db, projectId: string, id: string): Promise<EmailRow | null> =>
  db.email.findFirst({ where: { projectId, id } });

/**
 * The dispatcher's connection for its claims: one, since it claims one pass at a time, on which the claim is
 * prepared and planned once, as index scans and nested loops only. Planned anew on each call, as an unnamed
 * statement is, the claim cost 2.2-3.4 ms of planning for 0.1 ms of execution on an idle queue (a dispatcher
 * polls four times a second), and every pass under load paid it again. On a small table a planner free to
 * choose joins the claimed ids to a scan of every email (services/delivery/src/db/emails.test.ts).
 */
export const createClaimsPool = (databaseUrl: string, schema: string, onError: (error: Error) => void): pg.Pool =>
  createPlannedOncePool(databaseUrl, schema, onError);

/** What one claim may take of the bulk lane: `limit` emails at most, its round of projects starting after `cursor`. */
export interface BulkClaim {
  limit: number;
  /** nextBulkCursor of domain/lanes.ts. */
  cursor: string;
}

/**
 * The months a claim reads: from `$5` (unsentSince) to an hour ahead. A condition of every part of the claim, so that
 * its plan, made once, leaves out as it starts every month that holds no unsent mail (emails is partitioned by month
 * on created_at), and the months created ahead.
 */
const unsentMonths = "created_at >= $5::timestamptz AND created_at < now() + interval '1 hour'";
/** Pending bulk (campaign) mail: the predicate of emails_bulk_due_idx (unqualified, it names the innermost `emails`). */
const bulkPending = `status = 'PENDING' AND category = 'CAMPAIGN' AND ${unsentMonths}`;
/** Pending urgent mail (transactional and workflow): the predicate of emails_urgent_due_idx. */
const urgentPending = `status = 'PENDING' AND category <> 'CAMPAIGN' AND ${unsentMonths}`;

/**
 * The earliest time an unsent (PENDING or SENDING) email may have been created at: the first instant of the oldest
 * month whose partition holds one, or of the oldest one the default partition holds, and never later than an hour
 * ago. Only a new email becomes unsent (created now), so until the next call the claim's months cover every unsent
 * email. One probe of a partition's (status, locked_until) index per month, oldest first, to the first that holds one.
 */
export async function unsentSince(client: pg.ClientBase, now = new Date()): Promise<Date> {
  const anHourAgo = new Date(now.getTime() - 3_600_000);
  const oldest = await oldestHolding(client, { table: "emails", column: "created_at" }, unsentEmail, anHourAgo);
  return oldest && oldest < anHourAgo ? oldest : anHourAgo;
}

/**
 * Claims up to `limit` due emails for `leaseMs`, `bulk.limit` at most of the bulk lane, of those created since `since`
 * (unsentSince): SENDING ones whose lease lapsed (their dispatcher died or stalled mid-send),
 * then the urgent lane's due emails in the order they fell due, then the bulk lane's, shared between the
 * projects that have due bulk mail (docs/decisions.md "Lanes, fair share and destinations"). One statement:
 * replicas skip each other's rows (SKIP LOCKED), and a claimed row is invisible to them until its lease
 * lapses. Each claim counts as an attempt, so an email whose sending kills its process cannot be claimed for ever.
 *
 * Every part is read in order from its own index, so a claim reads about `limit` rows however long the queue.
 * One condition with an OR across states (as this once was) cannot be read in order from any index: every
 * claim collected and sorted the whole queue, 18 ms for 20,000 waiting emails against 5 ms, and growing with
 * the queue. The urgent lane reads emails_urgent_due_idx, so that however many campaign emails fell due before
 * it, an urgent email is claimed by the next claim. The bulk lane walks the projects that have pending
 * campaign mail (one step of emails_bulk_due_idx per project, starting after `bulk.cursor` and wrapping round,
 * at most `bulk.limit` of them), keeps those with mail due now, and takes from each, in the order its mail fell
 * due, an equal share of `bulk.limit`. The claimed rows are then found by their key, (project_id, id, created_at).
 */
export async function claimDueEmails(
  pool: pg.Pool,
  leaseMs: number,
  limit: number,
  bulk: BulkClaim = { limit, cursor: firstBulkCursor },
  since: Date = new Date(0),
): Promise<EmailRow[]> {
  const nextProject = (after: string) => `coalesce(
      (SELECT e.project_id FROM emails e WHERE ${bulkPending} AND e.project_id > ${after} ORDER BY e.project_id LIMIT 1),
      (SELECT e.project_id FROM emails e WHERE ${bulkPending} ORDER BY e.project_id LIMIT 1))`;
  const { rows } = await pool.query<EmailRow>({
    name: "delivery_claim_due_emails",
    text: `WITH RECURSIVE lapsed AS (
      SELECT project_id, id, created_at FROM emails WHERE status = 'SENDING' AND locked_until < now() AND ${unsentMonths}
      ORDER BY locked_until LIMIT $2 FOR UPDATE SKIP LOCKED
    ),
    urgent AS (
      SELECT project_id, id, created_at FROM emails WHERE ${urgentPending} AND next_attempt_at <= now()
      ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED
    ),
    ring(project_id, first, turn) AS (
      SELECT p.project_id, p.project_id, 1 FROM (SELECT ${nextProject("$4::uuid")} AS project_id) p
      WHERE p.project_id IS NOT NULL AND $3::int > 0
      UNION ALL
      SELECT n.project_id, r.first, r.turn + 1 FROM ring r CROSS JOIN LATERAL (SELECT ${nextProject("r.project_id")} AS project_id) n
      WHERE r.turn < $3 AND n.project_id <> r.first
    ),
    active AS (
      SELECT r.project_id, r.turn FROM ring r
      WHERE EXISTS (SELECT 1 FROM emails e WHERE ${bulkPending} AND e.project_id = r.project_id AND e.next_attempt_at <= now())
    ),
    share AS (SELECT ceil($3::float8 / greatest(count(*), 1))::int AS each FROM active),
    bulk AS (
      SELECT c.project_id, c.id, c.created_at FROM active a CROSS JOIN LATERAL (
        SELECT e.project_id, e.id, e.created_at FROM emails e WHERE ${bulkPending} AND e.project_id = a.project_id AND e.next_attempt_at <= now()
        ORDER BY e.next_attempt_at LIMIT (SELECT each FROM share) FOR UPDATE SKIP LOCKED
      ) c
      ORDER BY a.turn LIMIT $3
    )
    UPDATE emails SET status = 'SENDING', attempts = attempts + 1, updated_at = now(),
      locked_until = now() + make_interval(secs => $1::double precision)
    WHERE ${unsentMonths}
      AND (project_id, id, created_at) IN (SELECT * FROM lapsed UNION ALL SELECT * FROM urgent UNION ALL SELECT * FROM bulk LIMIT $2)
    RETURNING id::text AS id, project_id::text AS "projectId", contact_id::text AS "contactId", idempotency_key AS "idempotencyKey",
      to_email AS "toEmail", to_name AS "toName", from_email AS "fromEmail", from_name AS "fromName", reply_to AS "replyTo",
      subject, html, headers, attachments, list_unsubscribe AS "listUnsubscribe", template_id::text AS "templateId",
      campaign_id::text AS "campaignId", workflow_id::text AS "workflowId", category, status, attempts,
      next_attempt_at AS "nextAttemptAt", locked_until AS "lockedUntil", message_id AS "messageId",
      provider_message_id AS "providerMessageId", provider_response AS "providerResponse", last_error AS "lastError",
      sent_at AS "sentAt", trace_parent AS "traceParent", created_at AS "createdAt", updated_at AS "updatedAt"`,
    values: [leaseMs / 1000, limit, Math.min(bulk.limit, limit), bulk.cursor, since],
  });
  return rows;
}

/** A claimed email put back untried, due again after `delayMs`. */
export interface HeldEmail {
  projectId: string;
  id: string;
  createdAt: Date;
  delayMs: number;
}

/**
 * Puts claimed emails back untried (their project's rate is used up, or their destination is at its limits or
 * backed off): the claim does not count as an attempt.
 */
export async function releaseEmails(db: Db, held: readonly HeldEmail[]): Promise<void> {
  if (held.length === 0) return;
  await db.$executeRaw`
    UPDATE emails e SET status = 'PENDING', attempts = greatest(e.attempts - 1, 0), locked_until = NULL, updated_at = now(),
      next_attempt_at = now() + make_interval(secs => h.delay_ms / 1000.0)
    FROM unnest(${held.map((email) => email.projectId)}::uuid[], ${held.map((email) => email.id)}::uuid[],
      ${held.map((email) => email.createdAt)}::timestamptz[], ${held.map((email) => email.delayMs)}::float8[])
      AS h(project_id, id, created_at, delay_ms)
    WHERE e.project_id = h.project_id AND e.id = h.id AND e.created_at = h.created_at AND e.status = 'SENDING'`;
}

export type SendingOutcome =
  | { status: "SENT"; providerMessageId: string; providerResponse: string; sentAt: Date }
  | { status: "PENDING"; lastError: string; nextAttemptAt: Date }
  | { status: "BOUNCED" | "FAILED"; lastError: string };
