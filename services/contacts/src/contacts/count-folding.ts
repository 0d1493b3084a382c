import { dayCountsFoldBatch, foldDayCounts } from "@herald/db";
import { type BackgroundLoop, createBackgroundLoop, type Logger } from "@herald/platform";
import type { Db } from "../db/client.js";
import { foldBatch, foldContactCounts } from "../db/contact-counts.js";
import { eventCounts } from "../db/events.js";

/**
 * Folds the change rows of the contact counts (db/contact-counts.ts) and of the event counts (db/events.ts) once a
 * minute, so that a total stays a sum of a few rows; a pass that found a full batch runs again at once.
 */
export function createCountFolding(options: { db: Db; logger: Logger; intervalMs?: number }): BackgroundLoop {
  return createBackgroundLoop({
    name: "count folding",
    logger: options.logger,
    idleMs: options.intervalMs ?? 60_000,
    pass: async () => {
      const projects = await foldContactCounts(options.db);
      const deltas = await foldDayCounts(options.db, eventCounts);
      return projects >= foldBatch || deltas >= dayCountsFoldBatch ? "busy" : "idle";
    },
  });
}
