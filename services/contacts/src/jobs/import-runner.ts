import type { Logger } from "@herald/platform";
import type { ContactsChanged } from "../contacts/contacts-changed.js";
import type { Db, Tx } from "../db/client.js";
import { type RegisteredField, registerFields } from "../db/contact-fields.js";
import { importContacts } from "../db/import-contacts.js";
import { findImportJobById, readImportFile, recordImportBatch, setImportTotal } from "../db/import-jobs.js";
import { claimJob, finishJob, holdLease, releaseLease } from "../db/job-leases.js";
import type { JsonObject } from "../domain/contact-data.js";
import { inferFieldType } from "../domain/field-type.js";
import { type ImportColumns, type ImportRowError, importColumnsOf, importRowOf } from "../domain/import-rows.js";
import { type CsvRecord, csvRecords } from "./csv-records.js";
import { type JobRunner, LeaseLost, maxJobAttempts } from "./job-runner.js";

/** SPEC.md shows errors[] unbounded; a file of 50,000 bad rows must not make a 50,000-item job, so the first ones are kept. */
export const maxImportErrors = 1_000;

export interface ImportRunnerOptions {
  db: Db;
  logger: Logger;
  leaseMs: number;
  /** Records per transaction. */
  batchSize: number;
  contactsChanged: ContactsChanged;
}

interface BatchOutcome {
  rows: number;
  imported: number;
  updated: number;
  skipped: number;
  errors: ImportRowError[];
}

/** The registry rows a batch implies: each key with the type of its first value in the file's order. */
function fieldsOf(rows: Array<{ data: JsonObject }>): RegisteredField[] {
  const fields = new Map<string, RegisteredField>();
  for (const { data } of rows) {
    for (const [key, value] of Object.entries(data)) {
      if (value !== null && !fields.has(key)) fields.set(key, { key, type: inferFieldType(value) });
    }
  }
  return [...fields.values()];
}

/**
 * Runs CSV imports: reads the stored file with csv-parse, and commits each batch of
 * records together with the checkpoint past it (rows_done) under the job's lease, so
 * a worker that dies loses at most its uncommitted batch and the next one resumes
 * after the checkpoint without counting anything twice.
 */
export function createImportRunner(options: ImportRunnerOptions): JobRunner {
  const { db, logger, leaseMs, batchSize } = options;

  async function inBatch<T>(id: string, owner: string, work: (tx: Tx) => Promise<T>): Promise<T> {
    return db.$transaction(
      async (tx) => {
        if (!(await holdLease(tx, "import_jobs", id, owner, leaseMs))) throw new LeaseLost(`import ${id} was taken over`);
        return work(tx);
      },
      { maxWait: 10_000, timeout: 60_000 },
    );
  }

  async function importBatch(job: { id: string; projectId: string }, owner: string, columns: ImportColumns, batch: CsvRecord[]) {
    const outcome: BatchOutcome = { rows: batch.length, imported: 0, updated: 0, skipped: 0, errors: [] };
    const valid: Array<{ email: string; data: JsonObject }> = [];
    for (const record of batch) {
      const row = "malformed" in record ? undefined : importRowOf(columns, record.cells, record.row);
      if (!row) outcome.errors.push({ row: record.row, email: "", reason: "malformed_row" });
      else if ("error" in row) outcome.errors.push(row.error);
      else valid.push(row);
    }
    outcome.skipped = outcome.errors.length;
    // Rows of one email merge in file order, within the batch here and across batches through the upsert.
    const merged = new Map<string, JsonObject>();
    for (const { email, data } of valid) merged.set(email, { ...merged.get(email), ...data });
    const now = new Date();
    const written = await inBatch(job.id, owner, async (tx) => {
      const { ids, created } = await importContacts(
        tx,
        job.projectId,
        [...merged].map(([email, data]) => ({ email, data })),
        now,
      );
      // The first row of an email created the contact; later rows of it (and rows of existing contacts) updated one.
      outcome.imported = created.size;
      outcome.updated = valid.length - created.size;
      await registerFields(tx, job.projectId, fieldsOf(valid));
      await recordImportBatch(tx, job.id, outcome, maxImportErrors);
      return ids;
    });
    options.contactsChanged(job.projectId, written);
  }

  async function fail(id: string, owner: string, failureReason: string) {
    await finishJob(db, "import_jobs", id, owner, { status: "failed", failureReason });
  }

  async function runImport(claimed: { id: string; attempts: number }, owner: string, signal: AbortSignal): Promise<void> {
    const job = await findImportJobById(db, claimed.id);
    if (!job) return;
    if (claimed.attempts > maxJobAttempts) {
      return fail(job.id, owner, `The import was interrupted ${maxJobAttempts} times; upload the file again`);
    }
    const file = await readImportFile(db, job.id);
    const records = csvRecords(file);
    const header = await records.next();
    if (header.done || "malformed" in header.value) {
      return fail(
        job.id,
        owner,
        header.done ? "The file is empty: a header row with an email column is required" : "The header row cannot be read",
      );
    }
    const columns = importColumnsOf(header.value.cells);
    if ("failure" in columns) return fail(job.id, owner, columns.failure);

    let batch: CsvRecord[] = [];
    const flush = async () => {
      if (batch.length > 0) await importBatch(job, owner, columns, batch);
      batch = [];
    };
    try {
      if (job.rowsDone === 0) {
        // A first pass counts the records, so that totalRows is known while the job runs.
        let total = 0;
        for await (const record of csvRecords(file)) if (record.row > 0) total++;
        await inBatch(job.id, owner, (tx) => setImportTotal(tx, job.id, total));
      }
      for await (const record of records) {
        if (record.row <= job.rowsDone) continue;
        batch.push(record);
        if (batch.length < batchSize) continue;
        await flush();
        if (signal.aborted) return await releaseLease(db, "import_jobs", job.id, owner);
      }
      await flush();
    } catch (error) {
      if (error instanceof LeaseLost) {
        logger.warn({ jobId: job.id }, "import taken over by another worker; leaving it");
        return;
      }
      throw error;
    }
    await finishJob(db, "import_jobs", job.id, owner, { status: "completed" });
  }

  return {
    kind: "import",
    async claim(owner) {
      const claimed = await claimJob(db, "import_jobs", owner, leaseMs);
      return claimed && { id: claimed.id, run: (signal) => runImport(claimed, owner, signal) };
    },
  };
}
