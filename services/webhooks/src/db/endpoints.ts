import type { Db } from "./client.js";
import { decodeCursor, encodeCursor } from "./cursor.js";
import type { Endpoint as EndpointRow, Prisma } from "./generated/client.js";

export type { EndpointRow };

export interface EndpointStats {
  pending: number;
  delivered: number;
  failed: number;
}

export interface EndpointWithStats extends EndpointRow {
  stats: EndpointStats;
}

export interface EndpointPage {
  endpoints: EndpointWithStats[];
  cursor: string;
  hasMore: boolean;
  total: number;
}

/** Counts of each endpoint's messages: pending counts those being delivered too. */
export async function statsOf(db: Db, endpointIds: string[]): Promise<Map<string, EndpointStats>> {
  const stats = new Map<string, EndpointStats>(endpointIds.map((id) => [id, { pending: 0, delivered: 0, failed: 0 }]));
  if (endpointIds.length === 0) return stats;
  const rows = await db.$queryRaw<Array<{ endpoint_id: string; status: string; count: bigint }>>`
    SELECT endpoint_id::text, status, count(*) AS count FROM messages
    WHERE endpoint_id = ANY(${endpointIds}::uuid[]) GROUP BY endpoint_id, status`;
  for (const row of rows) {
    const entry = stats.get(row.endpoint_id);
    if (!entry) continue;
    const count = Number(row.count);
    if (row.status === "delivered") entry.delivered += count;
    else if (row.status === "failed") entry.failed += count;
    else entry.pending += count;
  }
  return stats;
}

export async function withStats(db: Db, rows: EndpointRow[]): Promise<EndpointWithStats[]> {
  const stats = await statsOf(
    db,
    rows.map((row) => row.id),
  );
  return rows.map((row) => ({ ...row, stats: stats.get(row.id) ?? { pending: 0, delivered: 0, failed: 0 } }));
}

/** The project's endpoints, oldest first, a page after the cursor. */
export async function listEndpoints(db: Db, projectId: string, limit: number, cursor: string): Promise<EndpointPage> {
  const after = decodeCursor(cursor);
  const where: Prisma.EndpointWhereInput = {
    projectId,
    ...(after ? { OR: [{ createdAt: { gt: after.createdAt } }, { createdAt: after.createdAt, id: { gt: after.id } }] } : {}),
  };
  const [rows, total] = await Promise.all([
    db.endpoint.findMany({ where, orderBy: [{ createdAt: "asc" }, { id: "asc" }], take: limit + 1 }),
    db.endpoint.count({ where: { projectId } }),
  ]);
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  const hasMore = rows.length > limit;
  return { endpoints: await withStats(db, page), cursor: hasMore && last ? encodeCursor(last) : "", hasMore, total };
}

export const findEndpoint = (db: Db, projectId: string, id: string): Promise<EndpointRow | null> =>
  db.endpoint.findFirst({ where: { id, projectId } });

/** The enabled endpoints of a project, what the fan-out matches each fact against. */
export const enabledEndpointsOf = (db: Db, projectId: string) =>
  db.endpoint.findMany({ where: { projectId, enabled: true }, select: { id: true, eventTypes: true } });

export const countEndpoints = (db: Db | Prisma.TransactionClient, projectId: string): Promise<number> =>
  db.endpoint.count({ where: { projectId } });

/** An attempt succeeded: the endpoint is no longer failing. */
export async function markEndpointSucceeded(db: Db, id: string): Promise<void> {
  await db.$executeRaw`UPDATE endpoints SET failing_since = NULL WHERE id = ${id}::uuid AND failing_since IS NOT NULL`;
}

/**
 * An attempt failed: the endpoint is failing since its first failure after a success. Once it has failed for
 * `disableAfterMs`, it is disabled; the row is returned to the one caller that disabled it (which tells the admins).
 */
export async function markEndpointFailed(
  db: Db,
  id: string,
  disableAfterMs: number,
): Promise<{ projectId: string; url: string; failingSince: Date } | undefined> {
  const failing = await db.$queryRaw<Array<{ failingSince: Date }>>`
    UPDATE endpoints SET failing_since = coalesce(failing_since, now()) WHERE id = ${id}::uuid RETURNING failing_since AS "failingSince"`;
  const since = failing[0]?.failingSince;
  if (!since || Date.now() - since.getTime() < disableAfterMs) return undefined;
  const rows = await db.$queryRaw<Array<{ projectId: string; url: string }>>`
    UPDATE endpoints SET enabled = false, disabled_reason = 'failing', updated_at = now()
    WHERE id = ${id}::uuid AND enabled AND failing_since IS NOT NULL
    RETURNING project_id::text AS "projectId", url`;
  const disabled = rows[0];
  return disabled ? { ...disabled, failingSince: since } : undefined;
}

/** Forgets a project's endpoints and their messages: those created before `before` on a reset, every one on a deletion. */
export async function deleteProjectEndpoints(tx: Db | Prisma.TransactionClient, projectId: string, before: Date | null): Promise<number> {
  const { count } = await tx.endpoint.deleteMany({ where: { projectId, ...(before ? { createdAt: { lte: before } } : {}) } });
  return count;
}
