import type { Reader, Tx } from "./client.js";

export type BulkAction = "subscribe" | "unsubscribe" | "delete";

export interface BulkJobRow {
  id: string;
  projectId: string;
  action: BulkAction;
  status: "queued" | "processing" | "completed" | "failed";
  total: number;
  processed: number;
  succeeded: number;
  unchanged: number;
  notFound: number;
  createdAt: Date;
  finishedAt: Date | null;
}

const jobSelect = {
  id: true,
  projectId: true,
  action: true,
  status: true,
  total: true,
  processed: true,
  succeeded: true,
  unchanged: true,
  notFound: true,
  createdAt: true,
  finishedAt: true,
} as const;

const asBulkJob = (row: Omit<BulkJobRow, "action" | "status"> & { action: string; status: string }): BulkJobRow => ({
  ...row,
  action: row.action as BulkAction,
  status: row.status as BulkJobRow["status"],
});

export async function createBulkJob(db: Reader, job: { projectId: string; action: BulkAction; contactIds: string[] }): Promise<BulkJobRow> {
  return asBulkJob(
    await db.bulkJob.create({
      data: { projectId: job.projectId, action: job.action, contactIds: job.contactIds, total: job.contactIds.length },
      select: jobSelect,
    }),
  );
}

export async function findBulkJob(db: Reader, projectId: string, id: string): Promise<BulkJobRow | undefined> {
  const row = await db.bulkJob.findFirst({ where: { id, projectId }, select: jobSelect });
  return row ? asBulkJob(row) : undefined;
}

export async function readBulkJobTargets(db: Reader, id: string): Promise<{ job: BulkJobRow; contactIds: string[] }> {
  const { contactIds, ...row } = await db.bulkJob.findUniqueOrThrow({ where: { id }, select: { ...jobSelect, contactIds: true } });
  return { job: asBulkJob(row), contactIds };
}

/** A chunk's outcome and the checkpoint past it, in the chunk's own transaction. */
export async function recordBulkChunk(
  tx: Tx,
  id: string,
  chunk: { processed: number; succeeded: number; unchanged: number; notFound: number },
): Promise<void> {
  await tx.bulkJob.update({
    where: { id },
    data: {
      processed: { increment: chunk.processed },
      succeeded: { increment: chunk.succeeded },
      unchanged: { increment: chunk.unchanged },
      notFound: { increment: chunk.notFound },
    },
  });
}

/** Sets the subscription of the project's contacts among `ids` that are not in that state already; the changed ones. */
export async function setSubscribed(
  tx: Tx,
  projectId: string,
  ids: string[],
  subscribed: boolean,
  now: Date,
): Promise<Array<{ id: string; email: string }>> {
  return tx.$queryRaw`
    UPDATE contacts SET subscribed = ${subscribed}, updated_at = ${now}
    WHERE project_id = ${projectId}::uuid AND id = ANY(${ids}::uuid[]) AND subscribed <> ${subscribed}
    RETURNING id::text AS id, email`;
}

export async function countExisting(tx: Tx, projectId: string, ids: string[]): Promise<number> {
  const [row] = await tx.$queryRaw<Array<{ n: bigint }>>`
    SELECT count(*) AS n FROM contacts WHERE project_id = ${projectId}::uuid AND id = ANY(${ids}::uuid[])`;
  return Number(row?.n ?? 0);
}

export async function deleteContacts(tx: Tx, projectId: string, ids: string[]): Promise<number> {
  return tx.$executeRaw`DELETE FROM contacts WHERE project_id = ${projectId}::uuid AND id = ANY(${ids}::uuid[])`;
}
