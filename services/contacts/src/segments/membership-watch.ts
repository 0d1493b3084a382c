import { createBackgroundLoop, type Logger, type PassOutcome } from "@herald/platform";
import type { Db } from "../db/client.js";
import { claimDueTrackedSegments, listTrackedSegments, type SegmentRow } from "../db/segments.js";
import { evaluateMembership } from "./membership.js";

export interface MembershipWatch {
  /** Contacts whose data, subscription or events just changed: their tracked segments are re-evaluated within moments. */
  contactsChanged(projectId: string, contactIds: readonly string[]): void;
  start(): void;
  /** Finishes the evaluation under way, drops what is queued (the schedule catches it up) and stops. */
  stop(): Promise<void>;
}

/** Tracked segments claimed per scheduled pass. */
const scheduleBatch = 20;

/**
 * Keeps tracked dynamic segments current without a manual compute, two ways:
 * - at once, for contacts that just changed: their ids collect for `settleMs` and are
 *   then evaluated against the project's tracked segments, restricted to those ids;
 * - on a schedule, every `intervalMs`: each tracked segment (of every project) is
 *   fully evaluated, which also catches what time alone changes (`within`,
 *   `triggeredWithin`) and anything the immediate path lost to a crash. Replicas claim
 *   due segments with SKIP LOCKED, so each is evaluated once per interval.
 * Exactly-once emission does not depend on either: see evaluateMembership.
 */
export function createMembershipWatch(options: { db: Db; logger: Logger; intervalMs: number; settleMs: number }): MembershipWatch {
  const { db, logger } = options;
  const pending = new Map<string, Set<string>>();
  let flushTimer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let stopped = true;

  async function evaluate(segment: SegmentRow, contactIds?: string[]): Promise<void> {
    try {
      const change = await evaluateMembership(db, segment, { contactIds });
      if (change.added + change.removed > 0) {
        logger.debug({ segmentId: segment.id, ...change, scheduled: !contactIds }, "segment membership changed");
      }
    } catch (error) {
      // A segment deleted meanwhile, or the database away: the next pass tries again.
      logger.warn({ err: error, segmentId: segment.id }, "segment evaluation failed");
    }
  }

  async function flush(): Promise<void> {
    flushTimer = undefined;
    const batch = [...pending];
    pending.clear();
    for (const [projectId, ids] of batch) {
      // Read at every flush (one short query per project): a segment another replica just began tracking counts at once.
      const segments = await listTrackedSegments(db, projectId).catch(() => []);
      for (const segment of segments) await evaluate(segment, [...ids]);
    }
  }

  /** One evaluation at a time per process: the immediate and the scheduled path never race each other here. */
  function serialized<T>(work: () => Promise<T>): Promise<T> {
    const result = running.then(work);
    running = result.then(
      () => {},
      () => {},
    );
    return result;
  }

  async function scheduledPass(signal: AbortSignal): Promise<PassOutcome> {
    const due = await claimDueTrackedSegments(db, options.intervalMs, scheduleBatch);
    for (const segment of due) {
      if (signal.aborted) return "idle";
      await evaluate(segment);
    }
    return due.length < scheduleBatch ? "idle" : "busy";
  }

  const schedule = createBackgroundLoop({
    name: "scheduled segment evaluation",
    logger,
    idleMs: options.intervalMs,
    pass: (signal) => serialized(() => scheduledPass(signal)),
  });

  return {
    contactsChanged(projectId, contactIds) {
      if (stopped || contactIds.length === 0) return;
      const ids = pending.get(projectId) ?? new Set<string>();
      for (const id of contactIds) ids.add(id);
      pending.set(projectId, ids);
      flushTimer ??= setTimeout(() => void serialized(flush), options.settleMs);
    },

    start() {
      stopped = false;
      schedule.start();
    },

    async stop() {
      stopped = true;
      clearTimeout(flushTimer);
      pending.clear();
      await schedule.stop();
      await running;
    },
  };
}
