import type { SqlPool } from "../db/client.js";
import { recordTrackedEvents, type TrackedEventWrite, type TrackedEventWritten } from "../db/tracked-events.js";

export interface TrackBatcher {
  track(write: TrackedEventWrite): Promise<TrackedEventWritten>;
}

interface Waiting {
  write: TrackedEventWrite;
  resolve: (written: TrackedEventWritten) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit for /v1/track: a call is written at once when fewer than
 * `maxInFlight` batches are being written; otherwise it waits for one to finish and
 * goes with every call that arrived meanwhile, in one statement (recordTrackedEvents).
 * So a lone call waits for nobody, and under load each statement and commit carries
 * many events. Each call keeps its own outcome: should a batch fail (a deadlock with
 * another writer, say), its calls are written one by one through `writeAlone`, so
 * one call's failure is never another's.
 */
export function createTrackBatcher(deps: {
  pool: SqlPool;
  writeAlone: (write: TrackedEventWrite) => Promise<TrackedEventWritten>;
  /** After each batch: the outbox has rows to publish. */
  written: () => void;
  maxBatch?: number;
  maxInFlight?: number;
}): TrackBatcher {
  const maxBatch = deps.maxBatch ?? 200;
  const maxInFlight = deps.maxInFlight ?? 2;
  const waiting: Waiting[] = [];
  let inFlight = 0;

  async function writeBatch(batch: Waiting[]): Promise<void> {
    let results: TrackedEventWritten[] | undefined;
    try {
      results = await recordTrackedEvents(
        deps.pool,
        batch.map((call) => call.write),
        new Date(),
      );
    } catch {
      await Promise.all(batch.map((call) => deps.writeAlone(call.write).then(call.resolve, call.reject)));
      return;
    }
    deps.written();
    batch.forEach((call, index) => {
      const result = results[index];
      if (result) call.resolve(result);
      else call.reject(new Error("a batch answered fewer results than it had calls"));
    });
  }

  function pump(): void {
    while (inFlight < maxInFlight && waiting.length > 0) {
      inFlight++;
      void writeBatch(waiting.splice(0, maxBatch)).finally(() => {
        inFlight--;
        pump();
      });
    }
  }

  return {
    track(write) {
      return new Promise((resolve, reject) => {
        waiting.push({ write, resolve, reject });
        pump();
      });
    },
  };
}
