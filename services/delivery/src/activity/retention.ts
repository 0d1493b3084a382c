import { forgetDayCountsBefore, maintainTimePartitions } from "@herald/db";
import type { FieldViolation } from "@herald/errors";
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
import { activityCounts } from "../db/activity.js";
import type { Db } from "../db/client.js";
import { unsentEmail } from "../db/emails.js";
import {
  expireActivity,
  expireEmailContent,
  expireEmails,
  expireIdempotencyKeys,
  type ProjectEmailRetention,
  projectEmailRetention,
  projectsWithEmailData,
  setProjectEmailRetention,
} from "../db/retention.js";
import { requireProjectId } from "../domain/ids.js";

const dayMs = 86_400_000;

/** Rows changed per statement: each statement is short, so that a hot table is never locked for more than a moment. */
const expiryBatchSize = 1_000;

/** The deployment's windows: email content, and the activity with the email records. */
export interface EmailRetentionWindows {
  content: RetentionWindow;
  activity: RetentionWindow;
}

export interface EmailRetentionDeps {
  db: Db;
  pool: pg.Pool;
  logger: Logger;
  windows: EmailRetentionWindows;
}

export interface EmailRetentionResult {
  createdPartitions: string[];
  droppedPartitions: string[];
  expiredContent: number;
  expiredEmails: number;
  expiredActivity: number;
}

/**
 * One pass of the lifecycle of delivery's data: the monthly partitions ahead of email_activity and of emails are
 * created and the months past RETENTION_ACTIVITY_MAX_DAYS dropped whole (never a month of emails that holds unsent
 * mail), with the idempotency keys of the emails dropped; then, per project, content past its content window is
 * emptied, and activity and email records past its activity window deleted, in batches. What the feed's and campaigns'
 * counters show lives elsewhere (campaigns' counters, the emails' own status and times), so it does not change.
 */
export async function runEmailRetention(deps: EmailRetentionDeps, now = new Date(), signal?: AbortSignal): Promise<EmailRetentionResult> {
  const { db, windows } = deps;
  const partitions = await maintainTimePartitions(
    deps.pool,
    [
      { table: "email_activity", column: "occurred_at", retainDays: windows.activity.maxDays },
      { table: "emails", column: "created_at", retainDays: windows.activity.maxDays, keep: unsentEmail },
    ],
    { now },
  );
  const oldest = new Date(now.getTime() - windows.activity.maxDays * dayMs);
  await forgetDayCountsBefore(db, activityCounts, oldest);
  await expireInBatches(expiryBatchSize, () => expireIdempotencyKeys(db, oldest, expiryBatchSize), signal);
  const result: EmailRetentionResult = {
    createdPartitions: partitions.created,
    droppedPartitions: partitions.dropped,
    expiredContent: 0,
    expiredEmails: 0,
    // Rows of the default partitions past the deployment's maximum went in the maintenance (activity's and emails'
    // together), and so did their days' counts.
    expiredActivity: partitions.expired,
  };
  const ago = (days: number) => new Date(now.getTime() - days * dayMs);
  for (const project of await projectsWithEmailData(db)) {
    const content = ago(project.emailContentDays ?? windows.content.defaultDays);
    const activity = ago(project.activityDays ?? windows.activity.defaultDays);
    result.expiredContent += await expireInBatches(
      expiryBatchSize,
      () => expireEmailContent(db, project.projectId, content, expiryBatchSize),
      signal,
    );
    result.expiredActivity += await expireInBatches(
      expiryBatchSize,
      () => expireActivity(db, project.projectId, activity, expiryBatchSize),
      signal,
    );
    result.expiredEmails += await expireInBatches(
      expiryBatchSize,
      () => expireEmails(db, project.projectId, activity, expiryBatchSize),
      signal,
    );
  }
  const changed =
    partitions.created.length + partitions.dropped.length + result.expiredContent + result.expiredActivity + result.expiredEmails;
  if (changed > 0) deps.logger.info(result, "email retention");
  return result;
}

/** Runs runEmailRetention on start, every `intervalMs`, and when nudged (a project's windows changed). */
export function createEmailRetention(deps: EmailRetentionDeps & { intervalMs: number }): BackgroundLoop {
  return createBackgroundLoop({
    name: "email retention",
    logger: deps.logger,
    idleMs: deps.intervalMs,
    maxBackoffMs: 60_000,
    pass: async (signal) => {
      await runEmailRetention(deps, new Date(), signal);
      return "idle" as const;
    },
  });
}

export interface EmailRetentionSetting {
  content: RetentionSetting;
  activity: RetentionSetting;
}

export interface EmailRetentionSettings {
  get(projectId: string): Promise<EmailRetentionSetting>;
  /**
   * Sets both windows (undefined: the deployment's default) within the deployment's bounds, the content's no longer
   * than the activity's (RETENTION_OUT_OF_BOUNDS otherwise).
   */
  set(projectId: string, days: { emailContentDays: number | undefined; activityDays: number | undefined }): Promise<EmailRetentionSetting>;
  /** The first instant of the project's activity window: older activity is expired, whether or not deleted yet. */
  activitySince(projectId: string, now: Date): Promise<Date>;
}

export function createEmailRetentionSettings(deps: {
  db: Db;
  windows: EmailRetentionWindows;
  changed: () => void;
}): EmailRetentionSettings {
  const { db, windows } = deps;
  const settingOf = (retention: ProjectEmailRetention): EmailRetentionSetting => ({
    content: {
      days: retention.emailContentDays ?? windows.content.defaultDays,
      custom: retention.emailContentDays !== null,
      window: windows.content,
    },
    activity: {
      days: retention.activityDays ?? windows.activity.defaultDays,
      custom: retention.activityDays !== null,
      window: windows.activity,
    },
  });
  return {
    async get(projectId) {
      return settingOf(await projectEmailRetention(db, requireProjectId(projectId)));
    },
    async set(projectId, days) {
      requireProjectId(projectId);
      const violations = [
        retentionViolation("emailContentDays", days.emailContentDays, windows.content),
        retentionViolation("activityDays", days.activityDays, windows.activity),
      ].filter((violation): violation is FieldViolation => violation !== undefined);
      const retention = { emailContentDays: days.emailContentDays ?? null, activityDays: days.activityDays ?? null };
      const setting = settingOf(retention);
      if (violations.length === 0 && setting.content.days > setting.activity.days) {
        violations.push({
          field: "emailContentDays",
          message: `must be at most the activity's window (${setting.activity.days} days): content expires before the email's record`,
          code: "out_of_bounds",
          received: String(setting.content.days),
        });
      }
      if (violations.length > 0) throw retentionOutOfBounds(violations);
      await setProjectEmailRetention(db, projectId, retention);
      // A shorter window applies within moments, not at the next hourly pass.
      deps.changed();
      return setting;
    },
    async activitySince(projectId, now) {
      const { activityDays } = await projectEmailRetention(db, projectId);
      return new Date(now.getTime() - (activityDays ?? windows.activity.defaultDays) * dayMs);
    },
  };
}
