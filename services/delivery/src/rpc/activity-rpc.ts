import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { RetentionSetting } from "@herald/platform";
import { RetentionWindowSchema } from "@herald/proto/herald/common/v1/retention_pb";
import {
  type Activity,
  ActivitySchema,
  type ActivityService,
  EmailRetentionSchema,
  TimeseriesInterval,
} from "@herald/proto/herald/delivery/v1/activity_service_pb";
import type { Activity as ActivityFeed } from "../activity/activity.js";
import type { EmailRetentionSetting, EmailRetentionSettings } from "../activity/retention.js";
import type { ActivityRow } from "../db/activity.js";

export const activityToProto = (row: ActivityRow): Activity =>
  create(ActivitySchema, {
    id: row.id,
    projectId: row.projectId,
    type: row.type,
    emailId: row.emailId,
    contactId: row.contactId ?? "",
    recipient: row.recipient,
    url: row.url ?? "",
    reason: row.reason ?? "",
    campaignId: row.campaignId ?? "",
    workflowId: row.workflowId ?? "",
    category: row.category,
    occurredAt: timestampFromDate(row.occurredAt),
    subject: row.subject ?? "",
    sender: row.sender ?? "",
    inReplyToEmailId: row.inReplyToEmailId ?? "",
  });

const intervalFromProto = (interval: TimeseriesInterval) => (interval === TimeseriesInterval.HOUR ? ("hour" as const) : ("day" as const));

const windowToProto = (setting: RetentionSetting) =>
  create(RetentionWindowSchema, {
    days: setting.days,
    custom: setting.custom,
    defaultDays: setting.window.defaultDays,
    minDays: setting.window.minDays,
    maxDays: setting.window.maxDays,
  });

const retentionToProto = (setting: EmailRetentionSetting) =>
  create(EmailRetentionSchema, { emailContent: windowToProto(setting.content), activity: windowToProto(setting.activity) });

export function createActivityRpc(deps: {
  activity: ActivityFeed;
  retention: EmailRetentionSettings;
}): ServiceImpl<typeof ActivityService> {
  const { activity, retention } = deps;
  return {
    async getEmailRetention(request) {
      return { retention: retentionToProto(await retention.get(request.projectId)) };
    },
    async setEmailRetention(request) {
      const setting = await retention.set(request.projectId, {
        emailContentDays: request.emailContentDays,
        activityDays: request.activityDays,
      });
      return { retention: retentionToProto(setting) };
    },
    async listActivity(request) {
      const page = await activity.list(request.projectId, {
        limit: request.limit,
        cursor: request.cursor,
        types: request.types,
        emailId: request.emailId,
        contactId: request.contactId,
      });
      return {
        activities: page.activities.map(activityToProto),
        cursor: page.cursor,
        hasMore: page.hasMore,
        total: BigInt(page.total),
      };
    },
    async getActivityStats(request) {
      const stats = await activity.stats(request.projectId);
      return {
        total: BigInt(stats.total),
        last24Hours: BigInt(stats.last24Hours),
        last7Days: BigInt(stats.last7Days),
        last30Days: BigInt(stats.last30Days),
        byType: stats.byType.map((row) => ({
          type: row.type,
          total: BigInt(row.total),
          last24Hours: BigInt(row.last24Hours),
          last7Days: BigInt(row.last7Days),
          last30Days: BigInt(row.last30Days),
        })),
        emails: {
          sent: BigInt(stats.emails.sent),
          opened: BigInt(stats.emails.opened),
          clicked: BigInt(stats.emails.clicked),
          bounced: BigInt(stats.emails.bounced),
          complained: BigInt(stats.emails.complained),
        },
        rates: stats.rates,
      };
    },
    async getRecentActivityCount(request) {
      const { count, since } = await activity.recentCount(request.projectId, {
        windowMs: Number(request.windowSeconds) * 1000,
        types: request.types,
      });
      return { count: BigInt(count), since: timestampFromDate(since) };
    },
    async listActivityTypes(request) {
      const types = await activity.types(request.projectId);
      return {
        types: types.map((row) => ({ type: row.type, count: BigInt(row.count), lastSeenAt: timestampFromDate(row.lastSeenAt) })),
      };
    },
    async getTimeseries(request) {
      const interval = intervalFromProto(request.interval);
      const { range, buckets } = await activity.timeseries(request.projectId, {
        from: request.from ? timestampDate(request.from) : undefined,
        to: request.to ? timestampDate(request.to) : undefined,
        interval,
      });
      return {
        interval: interval === "hour" ? TimeseriesInterval.HOUR : TimeseriesInterval.DAY,
        from: timestampFromDate(range.from),
        to: timestampFromDate(range.to),
        buckets: buckets.map(({ start, ...counts }) => ({
          start: timestampFromDate(start),
          sent: BigInt(counts.sent),
          delivered: BigInt(counts.delivered),
          opened: BigInt(counts.opened),
          clicked: BigInt(counts.clicked),
          bounced: BigInt(counts.bounced),
          complained: BigInt(counts.complained),
        })),
      };
    },
  };
}
