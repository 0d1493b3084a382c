import type { SqlPool } from "./client.js";
import type { CompiledCondition } from "./condition-sql.js";
import { type ContactRow, contactColumns } from "./contacts.js";

/**
 * A condition compiled with its values numbered from `firstParameter`: the statement
 * that embeds it decides where they start.
 */
export type ConditionSql = (firstParameter: number) => CompiledCondition;

export interface ContactsPage {
  contacts: ContactRow[];
  /** Every row's window count; undefined for a page past the end, which has no row to carry it. */
  total: number | undefined;
}

/** The project's contacts the condition selects, counted live. */
export async function countContactsMatching(pool: SqlPool, projectId: string, conditionSql: ConditionSql): Promise<number> {
  const condition = conditionSql(2);
  const { rows } = await pool.query<{ n: string }>(
    `SELECT count(*) AS n FROM contacts c WHERE c.project_id = $1::uuid AND (${condition.sql})`,
    [projectId, ...condition.values],
  );
  return Number(rows[0]?.n ?? 0);
}

/** A page of the project's contacts the condition selects, newest first. */
export function pageContactsMatching(
  pool: SqlPool,
  projectId: string,
  conditionSql: ConditionSql,
  page: { limit: number; offset: number },
): Promise<ContactsPage> {
  const condition = conditionSql(4);
  return pageOf(
    pool,
    `SELECT ${contactColumns("c").text}, count(*) OVER () AS total FROM contacts c
     WHERE c.project_id = $1::uuid AND (${condition.sql})
     ORDER BY c.created_at DESC, c.id DESC LIMIT $2 OFFSET $3`,
    [projectId, page.limit, page.offset, ...condition.values],
  );
}

/** A page of a STATIC segment's members, the latest added first. */
export function pageStaticMembers(
  pool: SqlPool,
  projectId: string,
  segmentId: string,
  page: { limit: number; offset: number },
): Promise<ContactsPage> {
  return pageOf(
    pool,
    `SELECT ${contactColumns("c").text}, count(*) OVER () AS total FROM segment_members m
     JOIN contacts c ON c.project_id = m.project_id AND c.id = m.contact_id
     WHERE m.project_id = $1::uuid AND m.segment_id = $2::uuid
     ORDER BY m.created_at DESC, c.id DESC LIMIT $3 OFFSET $4`,
    [projectId, segmentId, page.limit, page.offset],
  );
}

async function pageOf(pool: SqlPool, text: string, values: unknown[]): Promise<ContactsPage> {
  const { rows } = await pool.query<ContactRow & { total: string }>(text, values);
  return {
    contacts: rows.map(({ total: _, ...contact }) => contact),
    total: rows[0] ? Number(rows[0].total) : undefined,
  };
}
