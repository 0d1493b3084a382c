import { DomainError, validationFailed } from "@herald/errors";
import { type BulkAction, type BulkJobRow, createBulkJob, findBulkJob } from "../db/bulk-jobs.js";
import type { Db } from "../db/client.js";
import { createImportJob, findImportJob, type ImportJobRow } from "../db/import-jobs.js";
import { isId, requireProjectId } from "../domain/ids.js";

/** SPEC.md "Limits": the gateway refuses larger uploads; this guards the service against other callers. */
export const maxImportBytes = 5 * 1024 * 1024;

/** SPEC.md "Limits": bulk operations take at most 1,000 contacts. */
export const maxBulkContacts = 1_000;

export interface JobRequests {
  startImport(projectId: string, filename: string, csv: Uint8Array): Promise<ImportJobRow>;
  getImport(projectId: string, jobId: string): Promise<ImportJobRow>;
  startBulkJob(projectId: string, action: BulkAction | undefined, contactIds: string[]): Promise<BulkJobRow>;
  getBulkJob(projectId: string, jobId: string): Promise<BulkJobRow>;
}

const jobNotFound = () => new DomainError("not-found", "JOB_NOT_FOUND", "Job not found");

/** Queues imports and bulk jobs (the worker runs them) and reports on them; another project's job is not found. */
export function createJobRequests(deps: { db: Db; nudgeWorker: () => void }): JobRequests {
  const { db } = deps;
  return {
    async startImport(projectId, filename, csv) {
      requireProjectId(projectId);
      if (csv.byteLength > maxImportBytes) {
        throw new DomainError("invalid-argument", "FILE_TOO_LARGE", `The CSV file may be at most ${maxImportBytes} bytes`);
      }
      const job = await createImportJob(db, { projectId, filename: filename.slice(0, 255), csv });
      deps.nudgeWorker();
      return job;
    },

    async getImport(projectId, jobId) {
      requireProjectId(projectId);
      const job = isId(jobId) ? await findImportJob(db, projectId, jobId) : undefined;
      if (!job) throw jobNotFound();
      return job;
    },

    async startBulkJob(projectId, action, contactIds) {
      requireProjectId(projectId);
      if (!action)
        throw validationFailed("Unknown bulk action", [
          { field: "action", message: "Must be subscribe, unsubscribe or delete", code: "invalid_enum" },
        ]);
      // Duplicates would count one contact twice; the job works on each id once.
      const ids = [...new Set(contactIds)];
      if (ids.length === 0 || contactIds.length > maxBulkContacts) {
        throw validationFailed(`Between 1 and ${maxBulkContacts} contact ids are required`, [
          {
            field: "ids",
            message: `Must list between 1 and ${maxBulkContacts} contact ids`,
            code: ids.length === 0 ? "too_small" : "too_big",
            received: String(contactIds.length),
          },
        ]);
      }
      const job = await createBulkJob(db, { projectId, action, contactIds: ids });
      deps.nudgeWorker();
      return job;
    },

    async getBulkJob(projectId, jobId) {
      requireProjectId(projectId);
      const job = isId(jobId) ? await findBulkJob(db, projectId, jobId) : undefined;
      if (!job) throw jobNotFound();
      return job;
    },
  };
}
