import type pg from "pg";
import { type CapStanding, usageKey } from "../domain/billing-caps.js";
import type { Db } from "./client.js";
import type { Tx } from "./emails.js";
import { Prisma } from "./generated/client.js";

/** The UTC month of the statement's (or transaction's) clock: the month emails.created_at falls in. */
export const thisMonthSql = `date_trunc('month', now() AT TIME ZONE 'UTC')::date`;

/** The cap of a category, from billing_caps `c` and a category column. */
export const capSql = (category: string) => `CASE ${category} WHEN 'TRANSACTIONAL' THEN c.transactional WHEN 'CAMPAIGN' THEN c.campaigns
  WHEN 'WORKFLOW' THEN c.workflows WHEN 'INBOUND' THEN c.inbound END`;

/** The capped pairs among rows of (project, category, cap, used), by usageKey. */
export const capStandingsOf = (rows: Array<{ projectId: string; category: string; cap: string | null; used: string }>) => {
  const standings = new Map<string, CapStanding>();
  for (const row of rows) {
    if (row.cap !== null) standings.set(usageKey(row.projectId, row.category), { cap: BigInt(row.cap), used: BigInt(row.used) });
  }
  return standings;
};

/**
 * Locks this month's usage rows of these pairs until the transaction ends (creating them
 * at 0), and answers the capped ones with their usage. Rows are locked in one order
 * (project, category), as insertEmails adds to them, so that two writers wait for each
 * other instead of deadlocking; the usage read under the lock is what every earlier
 * writer committed.
 */
export async function lockCapStandings(
  client: pg.ClientBase,
  pairs: ReadonlyArray<{ projectId: string; category: string }>,
): Promise<Map<string, CapStanding>> {
  const { rows } = await client.query<{ projectId: string; category: string; cap: string | null; used: string }>(
    `WITH locked AS (
       INSERT INTO monthly_usage (project_id, month, category, used)
       SELECT w.project_id, ${thisMonthSql}, w.category, 0 FROM unnest($1::uuid[], $2::text[]) AS w(project_id, category)
       ORDER BY w.project_id, w.category
       ON CONFLICT (project_id, month, category) DO UPDATE SET used = monthly_usage.used
       RETURNING project_id, category, used
     )
     SELECT l.project_id::text AS "projectId", l.category, (${capSql("l.category")})::text AS cap, l.used::text AS used
     FROM locked l LEFT JOIN billing_caps c ON c.project_id = l.project_id`,
    [pairs.map((pair) => pair.projectId), pairs.map((pair) => pair.category)],
  );
  return capStandingsOf(rows);
}

/** Which of a project's idempotency keys name emails already stored: those a repeated call does not add again. */
export async function storedIdempotencyKeys(client: pg.ClientBase, projectId: string, keys: readonly string[]): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const { rows } = await client.query<{ key: string }>(
    `SELECT idempotency_key AS key FROM email_idempotency_keys WHERE project_id = $1::uuid AND idempotency_key = ANY($2::text[])`,
    [projectId, keys],
  );
  return new Set(rows.map((row) => row.key));
}

/** The caps of a project as identity last announced them; applied only when newer than the copy held. */
export async function saveBillingCaps(
  tx: Tx,
  projectId: string,
  caps: { transactional?: bigint; campaigns?: bigint; workflows?: bigint; inbound?: bigint },
  changedAt: Date,
): Promise<void> {
  await tx.$executeRaw`
    INSERT INTO billing_caps (project_id, transactional, campaigns, workflows, inbound, changed_at)
    VALUES (${projectId}::uuid, ${caps.transactional ?? null}::bigint, ${caps.campaigns ?? null}::bigint, ${caps.workflows ?? null}::bigint,
            ${caps.inbound ?? null}::bigint, ${changedAt})
    ON CONFLICT (project_id) DO UPDATE SET transactional = EXCLUDED.transactional, campaigns = EXCLUDED.campaigns,
      workflows = EXCLUDED.workflows, inbound = EXCLUDED.inbound, changed_at = EXCLUDED.changed_at
    WHERE billing_caps.changed_at <= EXCLUDED.changed_at`;
}

/** A deleted project's caps and usage. A reset keeps both: identity keeps the month's metered usage too. */
export async function deleteProjectBilling(tx: Tx, projectId: string): Promise<void> {
  await tx.$executeRaw`DELETE FROM billing_caps WHERE project_id = ${projectId}::uuid`;
  await tx.$executeRaw`DELETE FROM monthly_usage WHERE project_id = ${projectId}::uuid`;
}

/** Which of these projects have received their inbound cap's worth of messages this month: the next one is refused. */
export async function projectsAtInboundCap(db: Db, projectIds: readonly string[]): Promise<Set<string>> {
  if (projectIds.length === 0) return new Set();
  const rows = await db.$queryRaw<Array<{ projectId: string }>>`
    SELECT c.project_id::text AS "projectId" FROM billing_caps c
    LEFT JOIN monthly_usage u ON u.project_id = c.project_id AND u.month = ${Prisma.raw(thisMonthSql)} AND u.category = 'INBOUND'
    WHERE c.project_id = ANY(${[...projectIds]}::uuid[]) AND c.inbound IS NOT NULL AND coalesce(u.used, 0) >= c.inbound`;
  return new Set(rows.map((row) => row.projectId));
}

/**
 * Counts one received message into the project's month, in the caller's transaction, and answers the count
 * with the project's inbound cap (null: none). The usage row stays locked until the transaction ends, so
 * that concurrent messages of one project are counted one after the other and never go past the cap together.
 */
export async function countInboundMessage(tx: Tx, projectId: string): Promise<{ used: bigint; cap: bigint | null }> {
  const [row] = await tx.$queryRaw<Array<{ used: bigint; cap: bigint | null }>>`
    WITH counted AS (
      INSERT INTO monthly_usage (project_id, month, category, used)
      VALUES (${projectId}::uuid, ${Prisma.raw(thisMonthSql)}, 'INBOUND', 1)
      ON CONFLICT (project_id, month, category) DO UPDATE SET used = monthly_usage.used + 1
      RETURNING used
    )
    SELECT counted.used, c.inbound AS cap FROM counted LEFT JOIN billing_caps c ON c.project_id = ${projectId}::uuid`;
  if (!row) throw new Error("counting a received message answered no row");
  return row;
}
