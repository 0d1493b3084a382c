import type { Logger } from "@herald/platform";
import type { KnownFields } from "../contacts/known-fields.js";
import type { Db } from "../db/client.js";
import {
  claimProjectWipe,
  extendWipeLease,
  finishProjectWipe,
  type ProjectWipeRow,
  releaseWipeLease,
  type WipedTable,
  wipeBatch,
  wipedTables,
} from "../db/project-wipes.js";
import type { JobRunner } from "./job-runner.js";

/** Rows per statement: small enough that each delete holds its locks only briefly. */
const batchSizes: Record<WipedTable, number> = {
  import_jobs: 100,
  bulk_jobs: 1_000,
  events: 5_000,
  segment_members: 5_000,
  contacts: 1_000,
  segments: 100,
  contact_fields: 1_000,
};

/**
 * Wipes the data of a reset or deleted project (requested by the project-lifecycle
 * consumer), table by table in short batches. Deleting is idempotent, so a wipe cut
 * short by a crash is simply done again.
 */
export function createProjectWiper(options: { db: Db; logger: Logger; leaseMs: number; knownFields: KnownFields }): JobRunner {
  const { db, logger, leaseMs } = options;

  async function wipe(row: ProjectWipeRow, owner: string, signal: AbortSignal): Promise<void> {
    const deleted: Partial<Record<WipedTable, number>> = {};
    for (const table of wipedTables) {
      let batch: number;
      do {
        if (signal.aborted) return releaseWipeLease(db, row.id, owner);
        batch = await wipeBatch(db, table, row, batchSizes[table]);
        deleted[table] = (deleted[table] ?? 0) + batch;
        await extendWipeLease(db, row.id, owner, leaseMs);
      } while (batch === batchSizes[table]);
    }
    await finishProjectWipe(db, row.id);
    options.knownFields.forget(row.projectId);
    logger.info({ projectId: row.projectId, deleted }, "project data wiped");
  }

  return {
    kind: "project-wipe",
    async claim(owner) {
      const row = await claimProjectWipe(db, owner, leaseMs);
      return row && { id: row.id, run: (signal) => wipe(row, owner, signal) };
    },
  };
}
