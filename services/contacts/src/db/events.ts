import { countSince, type DayCounts } from "@herald/db";
import type { Reader } from "./client.js";
import { Prisma } from "./generated/client.js";
import { jsonObjectOf } from "./json.js";

export interface EventRow {
  id: string;
  name: string;
  contactId: string;
  contactEmail: string;
  data: ReturnType<typeof jsonObjectOf>;
  createdAt: Date;
}

export interface EventFilter {
  name: string | undefined;
  contactId: string | undefined;
  /** The start of the project's window: older events are expired (shown nowhere), and their months not read. */
  since?: Date;
}

function filterSql(projectId: string, filter: EventFilter): Prisma.Sql {
  const conditions = [Prisma.sql`e.project_id = ${projectId}::uuid`];
  if (filter.name !== undefined) conditions.push(Prisma.sql`e.name = ${filter.name}`);
  if (filter.contactId !== undefined) conditions.push(Prisma.sql`e.contact_id = ${filter.contactId}::uuid`);
  if (filter.since !== undefined) conditions.push(Prisma.sql`e.created_at >= ${filter.since}`);
  return Prisma.join(conditions, " AND ");
}

export interface EventPageQuery {
  filter: EventFilter;
  before: { createdAt: Date; id: string } | undefined;
  limit: number;
}

/**
 * The statement of a page: newest first, ids breaking ties, after the given position (keyset). Bounded in time on
 * both sides where it can be (the window's start, the cursor), so that only those months' partitions are read
 * (tests/partitions.test.ts shows it with EXPLAIN).
 */
export function eventPageSql(projectId: string, options: EventPageQuery): Prisma.Sql {
  const before = options.before
    ? Prisma.sql`AND e.created_at <= ${options.before.createdAt} AND (e.created_at, e.id) < (${options.before.createdAt}, ${options.before.id}::uuid)`
    : Prisma.empty;
  return Prisma.sql`
    SELECT e.id::text AS id, e.name, e.contact_id::text AS "contactId", c.email AS "contactEmail", e.data, e.created_at AS "createdAt"
    FROM events e JOIN contacts c ON c.project_id = e.project_id AND c.id = e.contact_id
    WHERE ${filterSql(projectId, options.filter)} ${before}
    ORDER BY e.created_at DESC, e.id DESC
    LIMIT ${options.limit}`;
}

export async function listEvents(db: Reader, projectId: string, options: EventPageQuery): Promise<EventRow[]> {
  const rows = await db.$queryRaw<EventRow[]>(eventPageSql(projectId, options));
  return rows.map((row) => ({ ...row, data: jsonObjectOf(row.data) }));
}

/** Events per project, UTC day and name, kept by the triggers of migration 20261129130000_event_counts. */
export const eventCounts: DayCounts = { prefix: "event", source: { table: "events", time: "created_at", key: "name" } };

/**
 * What a filter matches: from the day counts when it is the project's window, with a name or not; a contact's events
 * (a few) are counted row by row.
 */
export async function countEvents(db: Reader, projectId: string, filter: EventFilter): Promise<number> {
  if (filter.contactId === undefined && filter.since !== undefined) {
    return countSince(db, eventCounts, projectId, filter.since, filter.name === undefined ? undefined : [filter.name]);
  }
  const [row] = await db.$queryRaw<Array<{ n: bigint }>>`SELECT count(*) AS n FROM events e WHERE ${filterSql(projectId, filter)}`;
  return Number(row?.n ?? 0);
}

export interface EventStats {
  total: number;
  last24Hours: number;
  last7Days: number;
  last30Days: number;
  distinctNames: number;
  contactsWithEvents: number;
}

/** The project's events since the start of its window (`since`): expired events count nowhere, deleted yet or not. */
export async function eventStats(db: Reader, projectId: string, now: Date, since: Date): Promise<EventStats> {
  const day = 86_400_000;
  const [row] = await db.$queryRaw<Array<Record<keyof EventStats, bigint>>>`
    SELECT
      count(*) AS total,
      count(*) FILTER (WHERE created_at > ${new Date(now.getTime() - day)}) AS "last24Hours",
      count(*) FILTER (WHERE created_at > ${new Date(now.getTime() - 7 * day)}) AS "last7Days",
      count(*) FILTER (WHERE created_at > ${new Date(now.getTime() - 30 * day)}) AS "last30Days",
      count(DISTINCT name) AS "distinctNames",
      count(DISTINCT contact_id) AS "contactsWithEvents"
    FROM events WHERE project_id = ${projectId}::uuid AND created_at >= ${since}`;
  return {
    total: Number(row?.total ?? 0),
    last24Hours: Number(row?.last24Hours ?? 0),
    last7Days: Number(row?.last7Days ?? 0),
    last30Days: Number(row?.last30Days ?? 0),
    distinctNames: Number(row?.distinctNames ?? 0),
    contactsWithEvents: Number(row?.contactsWithEvents ?? 0),
  };
}

export interface EventNameCount {
  name: string;
  count: number;
  lastSeenAt: Date;
}

/** Each name with its count and latest occurrence; by name, or by count (most first) when `top` is set. */
export async function countEventNames(
  db: Reader,
  projectId: string,
  options: { since?: Date; top?: number } = {},
): Promise<EventNameCount[]> {
  const since = options.since ? Prisma.sql`AND created_at >= ${options.since}` : Prisma.empty;
  const order = options.top === undefined ? Prisma.sql`ORDER BY name` : Prisma.sql`ORDER BY count(*) DESC, name LIMIT ${options.top}`;
  const rows = await db.$queryRaw<Array<{ name: string; count: bigint; lastSeenAt: Date }>>`
    SELECT name, count(*) AS count, max(created_at) AS "lastSeenAt"
    FROM events WHERE project_id = ${projectId}::uuid ${since}
    GROUP BY name ${order}`;
  return rows.map((row) => ({ ...row, count: Number(row.count) }));
}

/** Deletes up to `limit` events of a name: callers repeat until nothing is left, each batch its own short statement. */
export async function deleteEventBatch(db: Reader, projectId: string, name: string, limit: number): Promise<number> {
  return db.$executeRaw`
    DELETE FROM events WHERE (id, created_at) IN (
      SELECT id, created_at FROM events WHERE project_id = ${projectId}::uuid AND name = ${name} LIMIT ${limit}
    )`;
}
