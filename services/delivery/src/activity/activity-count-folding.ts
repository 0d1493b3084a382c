import { dayCountsFoldBatch, foldDayCounts } from "@herald/db";
import { type BackgroundLoop, createBackgroundLoop, type Logger } from "@herald/platform";
import { activityCounts } from "../db/activity.js";
import type { Db } from "../db/client.js";

/**
 * Folds the change rows of the activity counts (db/activity.ts) once a minute, so that a total stays a sum of a few
 * rows; a pass that found a full batch runs again at once.
 */
export function createActivityCountFolding(options: { db: Db; logger: Logger; intervalMs?: number }): BackgroundLoop {
  return createBackgroundLoop({
    name: "activity count folding",
    logger: options.logger,
    idleMs: options.intervalMs ?? 60_000,
    pass: async () => ((await foldDayCounts(options.db, activityCounts)) >= dayCountsFoldBatch ? "busy" : "idle"),
  });
}
