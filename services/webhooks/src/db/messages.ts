import type { JsonObject } from "@bufbuild/protobuf";
import type { Db } from "./client.js";
import { decodeCursor, encodeCursor } from "./cursor.js";
import type { Prisma } from "./generated/client.js";

export type Tx = Prisma.TransactionClient;

export const messageStatuses = ["pending", "delivering", "delivered", "failed"] as const;
export type MessageStatus = (typeof messageStatuses)[number];

/** One try at delivering a message, as GET …/messages shows it. */
export interface Attempt {
  at: string;
  statusCode: number | null;
  durationMs: number;
  response: string;
  error: string | null;
}

export interface MessageRow {
  id: string;
  projectId: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  payload: JsonObject;
  status: MessageStatus;
  attempts: Attempt[];
  attemptCount: number;
  nextAttemptAt: Date | null;
  createdAt: Date;
  deliveredAt: Date | null;
}

export interface NewMessage {
  id: string;
  projectId: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  payload: JsonObject;
  nextAttemptAt: Date;
  /** Its payload names a contact being erased: redacted once it is delivered or fails (redactedPayload). */
  redactWhenSettled?: boolean;
}

/** What a redacted message keeps of its payload: the event's type and time, not what named the contact. */
const redactedPayload = `jsonb_build_object('type', payload -> 'type', 'timestamp', payload -> 'timestamp', 'data', jsonb_build_object('erased', true))`;

/** What a redacted message keeps of its attempts: their times and statuses, not the endpoint's answers (which may echo the payload). */
const redactedAttempts = `(SELECT coalesce(jsonb_agg(a || '{"response": ""}'::jsonb ORDER BY n), '[]'::jsonb)
  FROM jsonb_array_elements(attempts) WITH ORDINALITY AS t(a, n))`;

const columns = `id, project_id::text AS "projectId", endpoint_id::text AS "endpointId", event_id AS "eventId",
  event_type AS "eventType", payload, status, attempts, attempt_count AS "attemptCount", next_attempt_at AS "nextAttemptAt",
  created_at AS "createdAt", delivered_at AS "deliveredAt"`;

/**
 * Queues messages in one statement, for endpoints that are enabled now (whatever a cache said of them: an endpoint
 * disabled meanwhile gets none, and re-enabling it replays nothing); one that its endpoint already has for the same
 * event is left alone. Returns how many were new.
 */
export async function insertMessages(tx: Tx | Db, messages: readonly NewMessage[]): Promise<number> {
  if (messages.length === 0) return 0;
  return tx.$executeRaw`
    INSERT INTO messages (id, project_id, endpoint_id, event_id, event_type, payload, next_attempt_at, redact_when_settled)
    SELECT u.* FROM unnest(
      ${messages.map((message) => message.id)}::text[], ${messages.map((message) => message.projectId)}::uuid[],
      ${messages.map((message) => message.endpointId)}::uuid[], ${messages.map((message) => message.eventId)}::text[],
      ${messages.map((message) => message.eventType)}::text[], ${messages.map((message) => JSON.stringify(message.payload))}::jsonb[],
      ${messages.map((message) => message.nextAttemptAt)}::timestamptz[],
      ${messages.map((message) => message.redactWhenSettled === true)}::boolean[]
    ) AS u(id, project_id, endpoint_id, event_id, event_type, payload, next_attempt_at, redact_when_settled)
    JOIN endpoints e ON e.id = u.endpoint_id AND e.project_id = u.project_id AND e.enabled
    ON CONFLICT (project_id, endpoint_id, event_id) DO NOTHING`;
}

export async function findMessage(db: Db, projectId: string, endpointId: string, id: string): Promise<MessageRow | undefined> {
  const rows = await db.$queryRawUnsafe<MessageRow[]>(
    `SELECT ${columns} FROM messages WHERE id = $1 AND endpoint_id = $2::uuid AND project_id = $3::uuid`,
    id,
    endpointId,
    projectId,
  );
  return rows[0];
}

/** An endpoint's messages, newest first, a page after the cursor. */
export async function listMessages(
  db: Db,
  projectId: string,
  endpointId: string,
  options: { limit: number; cursor: string; status?: MessageStatus | undefined },
): Promise<{ messages: MessageRow[]; cursor: string; hasMore: boolean; total: number }> {
  const after = decodeCursor(options.cursor);
  const values: unknown[] = [projectId, endpointId];
  let filter = "";
  if (options.status) {
    values.push(options.status);
    filter += ` AND status = $${values.length}`;
  }
  const countValues = [...values];
  const countFilter = filter;
  if (after) {
    values.push(after.createdAt, after.id);
    filter += ` AND (created_at, id) < ($${values.length - 1}::timestamptz, $${values.length})`;
  }
  values.push(options.limit + 1);
  const [rows, counted] = await Promise.all([
    db.$queryRawUnsafe<MessageRow[]>(
      `SELECT ${columns} FROM messages WHERE project_id = $1::uuid AND endpoint_id = $2::uuid${filter}
       ORDER BY created_at DESC, id DESC LIMIT $${values.length}`,
      ...values,
    ),
    db.$queryRawUnsafe<Array<{ count: bigint }>>(
      `SELECT count(*) AS count FROM messages WHERE project_id = $1::uuid AND endpoint_id = $2::uuid${countFilter}`,
      ...countValues,
    ),
  ]);
  const page = rows.slice(0, options.limit);
  const last = page.at(-1);
  const hasMore = rows.length > options.limit;
  return { messages: page, cursor: hasMore && last ? encodeCursor(last) : "", hasMore, total: Number(counted[0]?.count ?? 0) };
}

/** Queues one message again now (a message being delivered is left to finish). */
export async function requeueMessage(db: Db, projectId: string, endpointId: string, id: string): Promise<MessageRow | undefined> {
  const rows = await db.$queryRawUnsafe<MessageRow[]>(
    `UPDATE messages SET status = 'pending', next_attempt_at = now(), locked_until = NULL
     WHERE id = $1 AND endpoint_id = $2::uuid AND project_id = $3::uuid AND status <> 'delivering'
     RETURNING ${columns}`,
    id,
    endpointId,
    projectId,
  );
  return rows[0] ?? (await findMessage(db, projectId, endpointId, id));
}

/** Queues again every failed message of the endpoint created since `since`; returns how many. */
export async function requeueFailedSince(db: Db, projectId: string, endpointId: string, since: Date): Promise<number> {
  return db.$executeRaw`
    UPDATE messages SET status = 'pending', next_attempt_at = now(), locked_until = NULL
    WHERE project_id = ${projectId}::uuid AND endpoint_id = ${endpointId}::uuid AND status = 'failed' AND created_at >= ${since}`;
}

/** A claimed message with what its call needs of its endpoint. */
export interface ClaimedMessage {
  id: string;
  projectId: string;
  endpointId: string;
  eventType: string;
  payload: JsonObject;
  attemptCount: number;
  createdAt: Date;
  url: string;
  secret: string;
  /** The rotated-out secret while it still signs; null otherwise. */
  previousSecret: string | null;
  /** Whether the endpoint was failing when the message was claimed: only then does a success have to clear it. */
  endpointFailing: boolean;
}

/** Due: waiting, and its time has come. Each endpoint's due messages are a range of messages' (endpoint, status, time) index. */
const due = `m.status = 'pending' AND m.next_attempt_at <= now()`;

/**
 * Puts back in the queue the messages whose lease lapsed while they were being delivered (their process died mid-call),
 * due at once; their attempt was never recorded, so it is made again. Apart from the claim, so that the claim reads
 * each endpoint's due messages straight off the index, in order, however long its backlog.
 */
export async function releaseLapsedLeases(db: Db): Promise<number> {
  return db.$executeRaw`
    UPDATE messages SET status = 'pending', next_attempt_at = now(), locked_until = NULL
    WHERE status = 'delivering' AND locked_until < now()`;
}

/**
 * Claims up to `limit` due messages for `leaseMs`, in turns across endpoints: the enabled endpoints that have due
 * messages, starting after `cursor` (the last endpoint served) and wrapping round, each giving at most its free
 * places (`endpointCap` less its messages in flight under a live lease, whichever replica holds them). One statement:
 * replicas skip each other's rows (SKIP LOCKED).
 */
export async function claimDueMessages(
  db: Db,
  options: { limit: number; endpointCap: number; leaseMs: number; cursor: string },
): Promise<ClaimedMessage[]> {
  return db.$queryRawUnsafe<ClaimedMessage[]>(
    `WITH ready AS (
      SELECT e.id FROM endpoints e
      WHERE e.enabled AND EXISTS (SELECT 1 FROM messages m WHERE m.endpoint_id = e.id AND ${due})
      ORDER BY (e.id <= $4::uuid), e.id
      LIMIT $1
    ),
    picked AS (
      SELECT c.project_id, c.id FROM ready r CROSS JOIN LATERAL (
        SELECT m.project_id, m.id FROM messages m WHERE m.endpoint_id = r.id AND ${due}
        ORDER BY m.next_attempt_at
        LIMIT greatest(0, $2 - (SELECT count(*) FROM messages f WHERE f.endpoint_id = r.id AND f.status = 'delivering' AND f.locked_until >= now()))
        FOR UPDATE OF m SKIP LOCKED
      ) c
      LIMIT $1
    )
    UPDATE messages m SET status = 'delivering', locked_until = now() + make_interval(secs => $3::double precision)
    FROM endpoints e
    WHERE (m.project_id, m.id) IN (SELECT project_id, id FROM picked) AND e.id = m.endpoint_id
    RETURNING m.id, m.project_id::text AS "projectId", m.endpoint_id::text AS "endpointId", m.event_type AS "eventType",
      m.payload, m.attempt_count AS "attemptCount", m.created_at AS "createdAt", e.url, e.secret,
      CASE WHEN e.previous_secret_expires_at > now() THEN e.previous_secret END AS "previousSecret",
      e.failing_since IS NOT NULL AS "endpointFailing"`,
    options.limit,
    options.endpointCap,
    options.leaseMs / 1000,
    options.cursor,
  );
}

export type AttemptOutcome = { kind: "delivered" } | { kind: "retry"; at: Date } | { kind: "failed" };

/** One message's attempt and what follows it, as recordAttempts writes it. */
export interface AttemptRecord {
  projectId: string;
  id: string;
  attempt: Attempt;
  outcome: AttemptOutcome;
}

/**
 * Records attempts and what follows each, in one statement; a message no longer being delivered (its endpoint was
 * deleted, or its lease lapsed and another took it) is left alone.
 */
export async function recordAttempts(db: Db, records: readonly AttemptRecord[]): Promise<void> {
  if (records.length === 0) return;
  const statusOf = ({ outcome }: AttemptRecord) => (outcome.kind === "retry" ? "pending" : outcome.kind);
  await db.$executeRawUnsafe(
    `UPDATE messages m SET status = v.status, attempts = m.attempts || v.attempt, attempt_count = m.attempt_count + 1,
       next_attempt_at = v.next_attempt_at, locked_until = NULL,
       delivered_at = CASE WHEN v.status = 'delivered' THEN now() ELSE m.delivered_at END
     FROM unnest($1::uuid[], $2::text[], $3::text[], $4::jsonb[], $5::timestamptz[]) AS v(project_id, id, status, attempt, next_attempt_at)
     WHERE m.project_id = v.project_id AND m.id = v.id AND m.status = 'delivering'`,
    records.map((record) => record.projectId),
    records.map((record) => record.id),
    records.map(statusOf),
    records.map((record) => JSON.stringify([record.attempt])),
    records.map(({ outcome }) => (outcome.kind === "retry" ? outcome.at : null)),
  );
  const settled = records.filter(({ outcome }) => outcome.kind !== "retry");
  if (settled.length === 0) return;
  // Those that waited to go out while their contact was erased are redacted once settled (eraseContactFromMessages).
  await db.$executeRawUnsafe(
    `UPDATE messages SET payload = ${redactedPayload}, attempts = ${redactedAttempts}, redact_when_settled = false
     WHERE (project_id, id) IN (SELECT * FROM unnest($1::uuid[], $2::text[]))
       AND redact_when_settled AND status IN ('delivered', 'failed')`,
    settled.map((record) => record.projectId),
    settled.map((record) => record.id),
  );
}

/**
 * Forgets an erased contact in the project's messages (docs/decisions.md "Erasing a contact"): a settled message whose
 * payload names it (its id or its address) is redacted now; one still waiting or being delivered goes out as it
 * is (its endpoint is owed the event, contact.deleted included) and is redacted once it settles. Answers how many
 * were redacted and how many wait.
 *
 * One statement tells the two apart, by each row's status as it is when the row is locked: with two, a message that
 * settled between them (recordAttempts) was neither redacted by the first nor marked by the second, and kept the
 * contact for good.
 */
export async function eraseContactFromMessages(
  tx: Tx,
  erasure: { projectId: string; contactId: string; email: string },
): Promise<{ redacted: number; waiting: number }> {
  const settled = "status IN ('delivered', 'failed')";
  const [counts] = await tx.$queryRawUnsafe<Array<{ redacted: number; waiting: number }>>(
    `WITH erased AS (
       UPDATE messages SET
         payload = CASE WHEN ${settled} THEN ${redactedPayload} ELSE payload END,
         attempts = CASE WHEN ${settled} THEN ${redactedAttempts} ELSE attempts END,
         redact_when_settled = NOT (${settled})
       WHERE project_id = $1::uuid AND (strpos(payload::text, $2) > 0 OR ($3 <> '' AND strpos(lower(payload::text), $3) > 0))
       RETURNING redact_when_settled AS waits
     )
     SELECT (count(*) FILTER (WHERE NOT waits))::int AS redacted, (count(*) FILTER (WHERE waits))::int AS waiting FROM erased`,
    erasure.projectId,
    erasure.contactId,
    erasure.email.toLowerCase(),
  );
  return counts ?? { redacted: 0, waiting: 0 };
}

/** The age of the oldest message waiting, in seconds, over every endpoint (0 when none waits). */
export async function oldestPendingSeconds(db: Db): Promise<number> {
  const rows = await db.$queryRaw<Array<{ age: number | null }>>`
    SELECT extract(epoch FROM now() - min(created_at))::float8 AS age FROM messages WHERE status IN ('pending', 'delivering')`;
  return rows[0]?.age ?? 0;
}
