import { type BackgroundLoop, createBackgroundLoop, type Logger } from "@herald/platform";
import type { Db } from "../db/client.js";
import { foldBatch, foldContactCounts } from "../db/contact-counts.js";

/**
 * Folds the contact-count change rows (db/contact-counts.ts) once a minute, so that a project's total stays a
 * sum of a few rows; a pass that found a full batch runs again at once.
 */
export function createContactCountFolding(options: { db: Db; logger: Logger; intervalMs?: number }): BackgroundLoop {
  return createBackgroundLoop({
    name: "contact count folding",
    logger: options.logger,
    idleMs: options.intervalMs ?? 60_000,
    pass: async () => ((await foldContactCounts(options.db)) >= foldBatch ? "busy" : "idle"),
  });
}
