import { createGroupCommit } from "@herald/db";
import type { SqlPool } from "../db/client.js";
import { recordTrackedEvents, type TrackedEventWrite, type TrackedEventWritten } from "../db/tracked-events.js";

export interface TrackBatcher {
  track(write: TrackedEventWrite): Promise<TrackedEventWritten>;
}

/**
 * Group commit for /v1/track (createGroupCommit): concurrent calls are written together in
 * one statement (recordTrackedEvents); a batch that fails is written call by call through
 * `writeAlone`.
 */
export function createTrackBatcher(deps: {
  pool: SqlPool;
  writeAlone: (write: TrackedEventWrite) => Promise<TrackedEventWritten>;
  /** After each batch: the outbox has rows to publish. */
  written: () => void;
  maxBatch?: number;
  maxInFlight?: number;
}): TrackBatcher {
  const commits = createGroupCommit({
    writeBatch: (writes: TrackedEventWrite[]) => recordTrackedEvents(deps.pool, writes, new Date()),
    writeAlone: deps.writeAlone,
    written: deps.written,
    ...(deps.maxBatch === undefined ? {} : { maxBatch: deps.maxBatch }),
    ...(deps.maxInFlight === undefined ? {} : { maxInFlight: deps.maxInFlight }),
  });
  return { track: commits.write };
}
