import type { Reader, Tx } from "./client.js";
import { Prisma } from "./generated/client.js";

/** The tables of queued work that workers lease: they share the columns status, attempts, lease_owner, lease_expires_at. */
export type JobTable = "import_jobs" | "bulk_jobs";

export interface ClaimedJob {
  id: string;
  attempts: number;
}

/**
 * Takes the oldest job that is queued, or processing under a lease that expired (its
 * worker died), for `leaseMs`. SKIP LOCKED lets concurrent workers claim different
 * jobs without waiting on each other.
 */
export async function claimJob(db: Reader, table: JobTable, owner: string, leaseMs: number): Promise<ClaimedJob | undefined> {
  const name = Prisma.raw(table);
  const [job] = await db.$queryRaw<ClaimedJob[]>`
    UPDATE ${name} SET
      status = 'processing',
      attempts = attempts + 1,
      lease_owner = ${owner},
      lease_expires_at = now() + ${leaseMs} * interval '1 millisecond',
      started_at = COALESCE(started_at, now())
    WHERE id = (
      SELECT id FROM ${name}
      WHERE status = 'queued' OR (status = 'processing' AND lease_expires_at < now())
      ORDER BY created_at LIMIT 1
      FOR UPDATE SKIP LOCKED
    )
    RETURNING id::text AS id, attempts`;
  return job;
}

/**
 * Inside a batch's transaction, before its writes: locks the job row and extends the
 * lease, or answers false when another worker took the job over. A batch commits only
 * while its worker holds the lease, so two workers never both count the same rows.
 */
export async function holdLease(tx: Tx, table: JobTable, id: string, owner: string, leaseMs: number): Promise<boolean> {
  const held = await tx.$executeRaw`
    UPDATE ${Prisma.raw(table)} SET lease_expires_at = now() + ${leaseMs} * interval '1 millisecond'
    WHERE id = ${id}::uuid AND lease_owner = ${owner} AND status = 'processing'`;
  return held === 1;
}

/** Lets another worker take the job at once (this one is stopping between batches). */
export async function releaseLease(db: Reader, table: JobTable, id: string, owner: string): Promise<void> {
  await db.$executeRaw`
    UPDATE ${Prisma.raw(table)} SET lease_expires_at = now()
    WHERE id = ${id}::uuid AND lease_owner = ${owner} AND status = 'processing'`;
}

/** Ends the job for good: completed or failed, the lease dropped. */
export async function finishJob(
  db: Reader,
  table: JobTable,
  id: string,
  owner: string,
  outcome: { status: "completed" | "failed"; failureReason?: string },
): Promise<boolean> {
  // A finished job keeps its counts, not its input: an import's file, a bulk job's ids (an erased contact's among them).
  const freeFile = table === "import_jobs" ? Prisma.sql`, csv = ''::bytea` : Prisma.sql`, contact_ids = '{}'`;
  const finished = await db.$executeRaw`
    UPDATE ${Prisma.raw(table)} SET
      status = ${outcome.status},
      failure_reason = ${outcome.failureReason ?? null},
      finished_at = now(),
      lease_owner = NULL,
      lease_expires_at = NULL ${freeFile}
    WHERE id = ${id}::uuid AND lease_owner = ${owner} AND status = 'processing'`;
  return finished === 1;
}
