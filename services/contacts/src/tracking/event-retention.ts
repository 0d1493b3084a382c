import { forgetDayCountsBefore, maintainTimePartitions } from "@herald/db";
import {
  type BackgroundLoop,
  createBackgroundLoop,
  expireInBatches,
  type Logger,
  type RetentionSetting,
  type RetentionWindow,
  retentionOutOfBounds,
  retentionViolation,
} from "@herald/platform";
import type pg from "pg";
import type { Db } from "../db/client.js";
import { expireProjectEvents, projectEventsRetention, projectsWithEvents, setProjectEventsRetention } from "../db/event-retention.js";
import { eventCounts } from "../db/events.js";

const dayMs = 86_400_000;

/** Events deleted per statement: each statement is short, so that a hot table is never locked for more than a moment. */
const expiryBatchSize = 1_000;

export interface EventRetentionDeps {
  db: Db;
  pool: pg.Pool;
  logger: Logger;
  window: RetentionWindow;
}

export interface EventRetentionResult {
  createdPartitions: string[];
  droppedPartitions: string[];
  expiredEvents: number;
}

/**
 * One pass of the events' lifecycle: the monthly partitions ahead are created and the months past the deployment's
 * longest window (RETENTION_EVENTS_MAX_DAYS) dropped whole; then each project's events older than its own window
 * (or RETENTION_EVENTS_DAYS) are deleted in batches. Counters live elsewhere (contact counts, campaign stats,
 * delivery's emails), so nothing they show changes when events go.
 */
export async function runEventRetention(deps: EventRetentionDeps, now = new Date(), signal?: AbortSignal): Promise<EventRetentionResult> {
  const partitions = await maintainTimePartitions(deps.pool, [{ table: "events", column: "created_at", retainDays: deps.window.maxDays }], {
    now,
  });
  // Rows of the default partition past the deployment's maximum went in the maintenance, and so do their days' counts.
  await forgetDayCountsBefore(deps.db, eventCounts, new Date(now.getTime() - deps.window.maxDays * dayMs));
  let expiredEvents = partitions.expired;
  for (const project of await projectsWithEvents(deps.db)) {
    const before = new Date(now.getTime() - (project.eventsDays ?? deps.window.defaultDays) * dayMs);
    expiredEvents += await expireInBatches(
      expiryBatchSize,
      () => expireProjectEvents(deps.db, project.projectId, before, expiryBatchSize),
      signal,
    );
  }
  const result = { createdPartitions: partitions.created, droppedPartitions: partitions.dropped, expiredEvents };
  if (partitions.created.length > 0 || partitions.dropped.length > 0 || expiredEvents > 0) deps.logger.info(result, "event retention");
  return result;
}

/** Runs runEventRetention on start, every `intervalMs`, and when nudged (a project's window changed). */
export function createEventRetention(deps: EventRetentionDeps & { intervalMs: number }): BackgroundLoop {
  return createBackgroundLoop({
    name: "event retention",
    logger: deps.logger,
    idleMs: deps.intervalMs,
    maxBackoffMs: 60_000,
    pass: async (signal) => {
      await runEventRetention(deps, new Date(), signal);
      return "idle" as const;
    },
  });
}

export interface EventRetentionSettings {
  get(projectId: string): Promise<RetentionSetting>;
  /** Within the deployment's bounds (RETENTION_OUT_OF_BOUNDS otherwise); undefined returns to the default. */
  set(projectId: string, days: number | undefined): Promise<RetentionSetting>;
  /** The first instant of the project's window: older events are expired, whether or not deleted yet. */
  since(projectId: string, now: Date): Promise<Date>;
}

export function createEventRetentionSettings(deps: { db: Db; window: RetentionWindow; changed: () => void }): EventRetentionSettings {
  const settingOf = (days: number | undefined): RetentionSetting => ({
    days: days ?? deps.window.defaultDays,
    custom: days !== undefined,
    window: deps.window,
  });
  return {
    async get(projectId) {
      return settingOf(await projectEventsRetention(deps.db, projectId));
    },
    async set(projectId, days) {
      const violation = retentionViolation("trackedEventsDays", days, deps.window);
      if (violation) throw retentionOutOfBounds([violation]);
      await setProjectEventsRetention(deps.db, projectId, days);
      // A shorter window applies within moments, not at the next hourly pass.
      deps.changed();
      return settingOf(days);
    },
    async since(projectId, now) {
      const days = (await projectEventsRetention(deps.db, projectId)) ?? deps.window.defaultDays;
      return new Date(now.getTime() - days * dayMs);
    },
  };
}
