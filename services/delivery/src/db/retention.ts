import type { Db } from "./client.js";
import { doneEmail } from "./emails.js";
import { Prisma } from "./generated/client.js";

const done = Prisma.raw(doneEmail);

/** A project's own windows, in days; null: the deployment's default. */
export interface ProjectEmailRetention {
  emailContentDays: number | null;
  activityDays: number | null;
}

export async function projectEmailRetention(db: Db, projectId: string): Promise<ProjectEmailRetention> {
  const row = await db.projectSettings.findUnique({ where: { projectId }, select: { emailContentDays: true, activityDays: true } });
  return { emailContentDays: row?.emailContentDays ?? null, activityDays: row?.activityDays ?? null };
}

export async function setProjectEmailRetention(db: Db, projectId: string, retention: ProjectEmailRetention): Promise<void> {
  await db.projectSettings.upsert({
    where: { projectId },
    create: { projectId, ...retention },
    update: { ...retention, updatedAt: new Date() },
  });
}

/**
 * Every project that holds emails done with (sent or failed: what retention may empty or delete) or activity, with its
 * own windows: a loose index scan of each table's index that leads with project_id (emails_done_idx for emails), one
 * probe per project, rather than a scan of the rows.
 */
export async function projectsWithEmailData(db: Db): Promise<Array<{ projectId: string } & ProjectEmailRetention>> {
  return db.$queryRaw`
    WITH RECURSIVE email_holders AS (
      SELECT (SELECT project_id FROM emails WHERE ${done} ORDER BY project_id LIMIT 1) AS project_id
      UNION ALL
      SELECT (SELECT e.project_id FROM emails e WHERE ${done} AND e.project_id > h.project_id ORDER BY e.project_id LIMIT 1)
      FROM email_holders h WHERE h.project_id IS NOT NULL
    ),
    activity_holders AS (
      SELECT (SELECT project_id FROM email_activity ORDER BY project_id LIMIT 1) AS project_id
      UNION ALL
      SELECT (SELECT a.project_id FROM email_activity a WHERE a.project_id > h.project_id ORDER BY a.project_id LIMIT 1)
      FROM activity_holders h WHERE h.project_id IS NOT NULL
    ),
    holders AS (
      SELECT project_id FROM email_holders WHERE project_id IS NOT NULL
      UNION
      SELECT project_id FROM activity_holders WHERE project_id IS NOT NULL
    )
    SELECT h.project_id::text AS "projectId", s.email_content_days AS "emailContentDays", s.activity_days AS "activityDays"
    FROM holders h LEFT JOIN project_settings s ON s.project_id = h.project_id`;
}

/**
 * Empties the content of up to `limit` of a project's emails created before `before` (HTML, custom headers,
 * attachments), keeping the record: its status, times, counters and metadata. Emails still queued or being sent
 * keep theirs until they are done.
 */
export async function expireEmailContent(db: Db, projectId: string, before: Date, limit: number): Promise<number> {
  return db.$executeRaw`
    UPDATE emails SET html = '', headers = '{}', attachments = '[]', content_expired_at = now()
    WHERE project_id = ${projectId}::uuid AND (id, created_at) IN (
      SELECT id, created_at FROM emails
      WHERE project_id = ${projectId}::uuid AND created_at < ${before} AND content_expired_at IS NULL
        AND ${done}
      LIMIT ${limit}
    )`;
}

/**
 * Deletes up to `limit` of a project's email records created before `before`, once done with (never a queued one),
 * with their idempotency keys.
 */
export async function expireEmails(db: Db, projectId: string, before: Date, limit: number): Promise<number> {
  const [row] = await db.$queryRaw<Array<{ deleted: number }>>`
    WITH gone AS (
      DELETE FROM emails WHERE project_id = ${projectId}::uuid AND (id, created_at) IN (
        SELECT id, created_at FROM emails
        WHERE project_id = ${projectId}::uuid AND created_at < ${before} AND ${done}
        LIMIT ${limit}
      )
      RETURNING idempotency_key
    ),
    forgotten AS (
      DELETE FROM email_idempotency_keys k USING gone
      WHERE k.project_id = ${projectId}::uuid AND k.idempotency_key = gone.idempotency_key
    )
    SELECT count(*)::int AS deleted FROM gone`;
  return row?.deleted ?? 0;
}

/**
 * Deletes up to `limit` idempotency keys of emails created before `before`: those of the months the maintenance dropped
 * whole, whose emails went without a statement per row.
 */
export async function expireIdempotencyKeys(db: Db, before: Date, limit: number): Promise<number> {
  return db.$executeRaw`
    DELETE FROM email_idempotency_keys WHERE ctid IN (
      SELECT ctid FROM email_idempotency_keys WHERE created_at < ${before} LIMIT ${limit}
    )`;
}

/** Deletes up to `limit` of a project's activity rows older than `before`. */
export async function expireActivity(db: Db, projectId: string, before: Date, limit: number): Promise<number> {
  return db.$executeRaw`
    DELETE FROM email_activity WHERE (id, occurred_at) IN (
      SELECT id, occurred_at FROM email_activity WHERE project_id = ${projectId}::uuid AND occurred_at < ${before} LIMIT ${limit}
    )`;
}
