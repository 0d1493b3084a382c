import { DomainError } from "@herald/errors";
import {
  type ActivityFilter,
  type ActivityRow,
  countActivity,
  countActivitySince,
  countByType,
  countEmailsByOutcome,
  countPerBucket,
  type EmailCounts,
  listActivity,
  type TypeCounts,
} from "../db/activity.js";
import type { Db } from "../db/client.js";
import { isId, requireProjectId } from "../domain/ids.js";
import { isStorableInstant } from "../domain/instants.js";
import { emailActivityTypes } from "../events/email-activity-outbox.js";
import {
  activityTypesOf,
  type BucketRange,
  bucketRangeOf,
  fillBuckets,
  type Interval,
  intervalMs,
  rateOf,
  recentWindowOf,
  seriesTypes,
  type TimeseriesBucket,
} from "./analytics.js";

export const activityPageLimits = { fallback: 20, max: 100 };

export interface ActivityPage {
  activities: ActivityRow[];
  cursor: string;
  hasMore: boolean;
  /** On the first page only; 0 on the others. */
  total: number;
}

export interface ActivityStats {
  total: number;
  last24Hours: number;
  last7Days: number;
  last30Days: number;
  /** Every type, zeros included, in emailActivityTypes order. */
  byType: Array<Omit<TypeCounts, "lastSeenAt">>;
  emails: EmailCounts;
  rates: { openRate: number; clickRate: number; bounceRate: number; complaintRate: number };
}

export interface Activity {
  list(
    projectId: string,
    query: { limit: number; cursor: string; types: readonly string[]; emailId: string; contactId: string },
  ): Promise<ActivityPage>;
  stats(projectId: string): Promise<ActivityStats>;
  recentCount(projectId: string, query: { windowMs: number; types: readonly string[] }): Promise<{ count: number; since: Date }>;
  types(projectId: string): Promise<Array<{ type: string; count: number; lastSeenAt: Date }>>;
  timeseries(
    projectId: string,
    query: { from: Date | undefined; to: Date | undefined; interval: Interval },
  ): Promise<{ range: BucketRange; buckets: TimeseriesBucket[] }>;
}

interface Position {
  occurredAt: string;
  id: string;
}

const isPosition = (value: unknown): value is Position =>
  typeof value === "object" &&
  value !== null &&
  typeof (value as Position).occurredAt === "string" &&
  isStorableInstant(new Date((value as Position).occurredAt)) &&
  typeof (value as Position).id === "string" &&
  isId((value as Position).id);

/** Cursors are opaque to clients: base64url of the last item's (occurredAt, id). */
const encodeCursor = (position: Position): string => Buffer.from(JSON.stringify(position)).toString("base64url");

function decodeCursor(cursor: string): Position {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    value = undefined;
  }
  if (!isPosition(value)) {
    throw new DomainError("invalid-argument", "INVALID_CURSOR", "The cursor is not one this list returned", {
      suggestion: "Start again without a cursor",
    });
  }
  return value;
}

const pageLimit = (requested: number): number =>
  requested <= 0 ? activityPageLimits.fallback : Math.min(Math.trunc(requested), activityPageLimits.max);

export function createActivity(deps: {
  db: Db;
  /** The start of a project's activity window: the feed shows nothing older. */
  activitySince: (projectId: string, now: Date) => Promise<Date>;
  now?: () => Date;
}): Activity {
  const { db } = deps;
  const now = deps.now ?? (() => new Date());

  return {
    async list(projectId, query) {
      requireProjectId(projectId);
      const limit = pageLimit(query.limit);
      const position = query.cursor ? decodeCursor(query.cursor) : undefined;
      const types = activityTypesOf(query.types);
      // An id that is not a uuid names nothing (and must not reach a uuid column).
      if ((query.emailId && !isId(query.emailId)) || (query.contactId && !isId(query.contactId))) {
        return { activities: [], cursor: "", hasMore: false, total: 0 };
      }
      const filter: ActivityFilter = {
        types,
        emailId: query.emailId || undefined,
        contactId: query.contactId || undefined,
        since: await deps.activitySince(projectId, now()),
      };
      const before = position && { occurredAt: new Date(position.occurredAt), id: position.id };
      const [rows, total] = await Promise.all([
        listActivity(db, projectId, { filter, before, limit: limit + 1 }),
        position ? Promise.resolve(0) : countActivity(db, projectId, filter),
      ]);
      const activities = rows.slice(0, limit);
      const last = activities.at(-1);
      const hasMore = rows.length > limit;
      const cursor = hasMore && last ? encodeCursor({ occurredAt: last.occurredAt.toISOString(), id: last.id }) : "";
      return { activities, cursor, hasMore, total };
    },

    async stats(projectId) {
      requireProjectId(projectId);
      const at = now();
      const since = await deps.activitySince(projectId, at);
      const [counts, emails] = await Promise.all([countByType(db, projectId, at, since), countEmailsByOutcome(db, projectId, since)]);
      const sum = (pick: (row: TypeCounts) => number) => counts.reduce((total, row) => total + pick(row), 0);
      const found = new Map(counts.map((row) => [row.type, row]));
      return {
        total: sum((row) => row.total),
        last24Hours: sum((row) => row.last24Hours),
        last7Days: sum((row) => row.last7Days),
        last30Days: sum((row) => row.last30Days),
        byType: emailActivityTypes.map((type) => {
          const row = found.get(type);
          return {
            type,
            total: row?.total ?? 0,
            last24Hours: row?.last24Hours ?? 0,
            last7Days: row?.last7Days ?? 0,
            last30Days: row?.last30Days ?? 0,
          };
        }),
        emails,
        rates: {
          openRate: rateOf(emails.opened, emails.sent),
          clickRate: rateOf(emails.clicked, emails.sent),
          bounceRate: rateOf(emails.bounced, emails.sent),
          complaintRate: rateOf(emails.complained, emails.sent),
        },
      };
    },

    async recentCount(projectId, query) {
      requireProjectId(projectId);
      const at = now();
      const since = new Date(at.getTime() - recentWindowOf(query.windowMs));
      // A window reaching past the project's activity window counts what is left of it: the rest expired.
      const window = await deps.activitySince(projectId, at);
      return { count: await countActivitySince(db, projectId, since > window ? since : window, activityTypesOf(query.types)), since };
    },

    async types(projectId) {
      const at = now();
      const counts = await countByType(db, requireProjectId(projectId), at, await deps.activitySince(projectId, at));
      return counts.map((row) => ({ type: row.type, count: row.total, lastSeenAt: row.lastSeenAt }));
    },

    async timeseries(projectId, query) {
      requireProjectId(projectId);
      const at = now();
      const range = bucketRangeOf(query, at);
      const since = await deps.activitySince(projectId, at);
      const counts = await countPerBucket(db, projectId, {
        // Buckets before the window stay in the series, empty: their activity expired.
        from: new Date(Math.max(range.from.getTime(), since.getTime())),
        to: range.to,
        bucketMs: intervalMs[range.interval],
        types: Object.values(seriesTypes),
      });
      return { range, buckets: fillBuckets(range, counts) };
    },
  };
}
