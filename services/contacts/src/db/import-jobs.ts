import type { ImportRowError } from "../domain/import-rows.js";
import type { Reader, Tx } from "./client.js";

export interface ImportJobRow {
  id: string;
  projectId: string;
  filename: string;
  status: "queued" | "processing" | "completed" | "failed";
  totalRows: number;
  rowsDone: number;
  imported: number;
  updated: number;
  skipped: number;
  errors: ImportRowError[];
  failureReason: string | null;
  createdAt: Date;
  finishedAt: Date | null;
}

// Every column but the file, which only the worker reads (once per claim).
const jobSelect = {
  id: true,
  projectId: true,
  filename: true,
  status: true,
  totalRows: true,
  rowsDone: true,
  imported: true,
  updated: true,
  skipped: true,
  errors: true,
  failureReason: true,
  createdAt: true,
  finishedAt: true,
} as const;

type Selected = Omit<ImportJobRow, "status" | "errors"> & { status: string; errors: unknown };

const asImportJob = (row: Selected): ImportJobRow => ({
  ...row,
  status: row.status as ImportJobRow["status"],
  errors: Array.isArray(row.errors) ? (row.errors as ImportRowError[]) : [],
});

export async function createImportJob(db: Reader, job: { projectId: string; filename: string; csv: Uint8Array }): Promise<ImportJobRow> {
  return asImportJob(
    await db.importJob.create({
      data: { projectId: job.projectId, filename: job.filename, csv: Buffer.from(job.csv) },
      select: jobSelect,
    }),
  );
}

export async function findImportJob(db: Reader, projectId: string, id: string): Promise<ImportJobRow | undefined> {
  const row = await db.importJob.findFirst({ where: { id, projectId }, select: jobSelect });
  return row ? asImportJob(row) : undefined;
}

export async function findImportJobById(db: Reader, id: string): Promise<ImportJobRow | undefined> {
  const row = await db.importJob.findUnique({ where: { id }, select: jobSelect });
  return row ? asImportJob(row) : undefined;
}

export async function readImportFile(db: Reader, id: string): Promise<Uint8Array> {
  const row = await db.importJob.findUniqueOrThrow({ where: { id }, select: { csv: true } });
  return row.csv;
}

/** The number of data records, once the worker has read the file through. */
export async function setImportTotal(tx: Tx, id: string, totalRows: number): Promise<void> {
  await tx.importJob.update({ where: { id }, data: { totalRows } });
}

/**
 * A batch's outcome and the checkpoint past it, in the batch's own transaction: a
 * resumed job starts after `rowsDone` and so never counts a row twice. Row errors
 * are kept up to `maxErrors`; the counts still include the rest.
 */
export async function recordImportBatch(
  tx: Tx,
  id: string,
  batch: { rows: number; imported: number; updated: number; skipped: number; errors: ImportRowError[] },
  maxErrors: number,
): Promise<void> {
  await tx.$executeRaw`
    UPDATE import_jobs SET
      rows_done = rows_done + ${batch.rows},
      imported = imported + ${batch.imported},
      updated = updated + ${batch.updated},
      skipped = skipped + ${batch.skipped},
      errors = errors || (
        SELECT COALESCE(jsonb_agg(t.e ORDER BY t.n), '[]'::jsonb)
        FROM jsonb_array_elements(${JSON.stringify(batch.errors)}::jsonb) WITH ORDINALITY AS t(e, n)
        WHERE t.n <= ${maxErrors} - jsonb_array_length(errors)
      )
    WHERE id = ${id}::uuid`;
}
