import { countSince, type DayCounts } from "@herald/db";
import type { Db } from "./client.js";
import type { Tx } from "./emails.js";
import { type EmailActivity, Prisma } from "./generated/client.js";

export type ActivityRow = EmailActivity;

export interface NewActivityRow {
  id: string;
  projectId: string;
  emailId: string;
  contactId: string | null;
  type: string;
  recipient: string;
  url: string | null;
  reason: string | null;
  campaignId: string | null;
  workflowId: string | null;
  category: string;
  occurredAt: Date;
  /** email.received only. */
  subject?: string;
  sender?: string;
  inReplyToEmailId?: string;
}

export interface ActivityFilter {
  /** Any of these types; empty: every type. */
  types: readonly string[];
  emailId?: string;
  contactId?: string;
  /** The start of the project's activity window: older rows are expired (shown nowhere), and their months not read. */
  since?: Date;
}

/** Only ever called by writeEmailActivity, beside the outbox row of the same event. */
export async function insertActivity(tx: Tx, row: NewActivityRow): Promise<void> {
  // createMany: no RETURNING of a row nobody reads, on the dispatcher's path.
  await tx.emailActivity.createMany({ data: row });
}

const whereOf = (projectId: string, filter: ActivityFilter): Prisma.EmailActivityWhereInput => ({
  projectId,
  ...(filter.types.length > 0 ? { type: { in: [...filter.types] } } : {}),
  ...(filter.emailId ? { emailId: filter.emailId } : {}),
  ...(filter.contactId ? { contactId: filter.contactId } : {}),
  ...(filter.since ? { occurredAt: { gte: filter.since } } : {}),
});

export interface ActivityPageQuery {
  filter: ActivityFilter;
  before: { occurredAt: Date; id: string } | undefined;
  limit: number;
}

/**
 * The statement of a page, newest first; `before` continues after the last row of the previous page (keyset paging,
 * stable under new rows). Bounded in time on both sides where it can be (the window's start, the cursor), so that
 * only the partitions of those months are read (tests/partitions.test.ts shows it with EXPLAIN).
 */
export function activityPageSql(projectId: string, query: ActivityPageQuery): Prisma.Sql {
  const { filter, before } = query;
  const conditions = [Prisma.sql`project_id = ${projectId}::uuid`];
  if (filter.types.length > 0) conditions.push(Prisma.sql`type = ANY(${[...filter.types]}::text[])`);
  if (filter.emailId) conditions.push(Prisma.sql`email_id = ${filter.emailId}::uuid`);
  if (filter.contactId) conditions.push(Prisma.sql`contact_id = ${filter.contactId}::uuid`);
  if (filter.since) conditions.push(Prisma.sql`occurred_at >= ${filter.since}`);
  if (before) {
    conditions.push(Prisma.sql`occurred_at <= ${before.occurredAt} AND (occurred_at < ${before.occurredAt} OR id < ${before.id}::uuid)`);
  }
  return Prisma.sql`
    SELECT id::text AS id, project_id::text AS "projectId", email_id::text AS "emailId", contact_id::text AS "contactId", type,
      recipient, url, reason, campaign_id::text AS "campaignId", workflow_id::text AS "workflowId", category,
      occurred_at AS "occurredAt", subject, sender, in_reply_to_email_id::text AS "inReplyToEmailId"
    FROM email_activity
    WHERE ${Prisma.join(conditions, " AND ")}
    -- email_activity.id, the column: a bare "id" names the output's id::text, which no index orders, so rows of one
    -- instant (a campaign's batch) were all read and sorted for each page.
    ORDER BY occurred_at DESC, email_activity.id DESC
    LIMIT ${query.limit}`;
}

export function listActivity(db: Db, projectId: string, query: ActivityPageQuery): Promise<ActivityRow[]> {
  return db.$queryRaw<ActivityRow[]>(activityPageSql(projectId, query));
}

/** Activity per project, UTC day and type, kept by the triggers of migration 20261129130000_activity_counts. */
export const activityCounts: DayCounts = { prefix: "activity", source: { table: "email_activity", time: "occurred_at", key: "type" } };

/**
 * What a filter matches: from the day counts when it is the project's window, of some types or all; an email's or a
 * contact's activity (a few rows) is counted row by row.
 */
export const countActivity = (db: Db, projectId: string, filter: ActivityFilter): Promise<number> =>
  filter.since && !filter.emailId && !filter.contactId
    ? countActivitySince(db, projectId, filter.since, filter.types)
    : db.emailActivity.count({ where: whereOf(projectId, filter) });

/** The activity since `since`, of these types (every type when empty), from the day counts. */
export const countActivitySince = (db: Db, projectId: string, since: Date, types: readonly string[]): Promise<number> =>
  countSince(db, activityCounts, projectId, since, types.length > 0 ? types : undefined);

export interface TypeCounts {
  type: string;
  total: number;
  last24Hours: number;
  last7Days: number;
  last30Days: number;
  lastSeenAt: Date;
}

/**
 * Per type present in the project: counts since the start of its window (`since`; expired activity counts nowhere,
 * deleted yet or not) and recent ones, and when it last happened.
 */
export async function countByType(db: Db, projectId: string, now: Date, since: Date): Promise<TypeCounts[]> {
  const day = 86_400_000;
  const rows = await db.$queryRaw<
    Array<{ type: string; total: bigint; last_24_hours: bigint; last_7_days: bigint; last_30_days: bigint; last_seen_at: Date }>
  >`
    SELECT type, count(*) AS total,
      count(*) FILTER (WHERE occurred_at >= ${new Date(now.getTime() - day)}) AS last_24_hours,
      count(*) FILTER (WHERE occurred_at >= ${new Date(now.getTime() - 7 * day)}) AS last_7_days,
      count(*) FILTER (WHERE occurred_at >= ${new Date(now.getTime() - 30 * day)}) AS last_30_days,
      max(occurred_at) AS last_seen_at
    FROM email_activity
    WHERE project_id = ${projectId}::uuid AND occurred_at >= ${since}
    GROUP BY type
    ORDER BY count(*) DESC, type`;
  return rows.map((row) => ({
    type: row.type,
    total: Number(row.total),
    last24Hours: Number(row.last_24_hours),
    last7Days: Number(row.last_7_days),
    last30Days: Number(row.last_30_days),
    lastSeenAt: row.last_seen_at,
  }));
}

export interface EmailCounts {
  /** Emails handed to a provider: accepted (email.sent) or refused for good at once (email.bounce without email.sent). */
  sent: number;
  opened: number;
  clicked: number;
  bounced: number;
  complained: number;
}

/** Distinct emails that reached each step since `since`: repeated opens or clicks of one email count once. */
export async function countEmailsByOutcome(db: Db, projectId: string, since: Date): Promise<EmailCounts> {
  const [row] = await db.$queryRaw<Array<Record<keyof EmailCounts, bigint>>>`
    SELECT count(DISTINCT email_id) FILTER (WHERE type IN ('email.sent', 'email.bounce')) AS sent,
      count(DISTINCT email_id) FILTER (WHERE type = 'email.open') AS opened,
      count(DISTINCT email_id) FILTER (WHERE type = 'email.click') AS clicked,
      count(DISTINCT email_id) FILTER (WHERE type = 'email.bounce') AS bounced,
      count(DISTINCT email_id) FILTER (WHERE type = 'email.complaint') AS complained
    FROM email_activity
    WHERE project_id = ${projectId}::uuid AND occurred_at >= ${since}
      AND type IN ('email.sent', 'email.bounce', 'email.open', 'email.click', 'email.complaint')`;
  return {
    sent: Number(row?.sent ?? 0),
    opened: Number(row?.opened ?? 0),
    clicked: Number(row?.clicked ?? 0),
    bounced: Number(row?.bounced ?? 0),
    complained: Number(row?.complained ?? 0),
  };
}

/** Events of these types in [from, to), counted per bucket: the bucket is floor(epoch / bucketMs), so buckets are UTC-aligned. */
export async function countPerBucket(
  db: Db,
  projectId: string,
  query: { from: Date; to: Date; bucketMs: number; types: readonly string[] },
): Promise<Array<{ bucket: number; type: string; count: number }>> {
  const rows = await db.$queryRaw<Array<{ bucket: bigint; type: string; count: bigint }>>`
    SELECT floor(extract(epoch FROM occurred_at) * 1000 / ${query.bucketMs}::double precision)::bigint AS bucket, type, count(*) AS count
    FROM email_activity
    WHERE project_id = ${projectId}::uuid AND type = ANY(${[...query.types]}::text[])
      AND occurred_at >= ${query.from} AND occurred_at < ${query.to}
    GROUP BY 1, 2`;
  return rows.map((row) => ({ bucket: Number(row.bucket), type: row.type, count: Number(row.count) }));
}

/** A reset or deleted project's activity. */
export async function deleteProjectActivity(tx: Tx, projectId: string): Promise<number> {
  const { count } = await tx.emailActivity.deleteMany({ where: { projectId } });
  return count;
}
