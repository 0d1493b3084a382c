import { DomainError } from "@herald/errors";
import { isStorableInstant } from "../domain/instants.js";
import { type EmailActivityType, emailActivityTypes } from "../events/email-activity-outbox.js";

/** Pure rules of the activity feed and send analytics: no I/O here. */

export const hourMs = 3_600_000;
export const dayMs = 24 * hourMs;

export type Interval = "day" | "hour";

export const intervalMs: Record<Interval, number> = { day: dayMs, hour: hourMs };

/** The most buckets one timeseries answers: 31 days of hours, 366 days of days. */
export const maxBuckets: Record<Interval, number> = { hour: 31 * 24, day: 366 };

/** Buckets answered when the caller gives no `from`: 30 days, or 24 hours. */
const defaultBuckets: Record<Interval, number> = { hour: 24, day: 30 };

/** The longest window of a recent count. */
export const maxRecentWindowMs = 366 * dayMs;
export const defaultRecentWindowMs = dayMs;

export const isActivityType = (value: string): value is EmailActivityType => (emailActivityTypes as readonly string[]).includes(value);

/** A type filter: every name must be one of the nine types, else INVALID_ACTIVITY_TYPE. */
export function activityTypesOf(requested: readonly string[]): EmailActivityType[] {
  const types = [...new Set(requested.map((type) => type.trim().toLowerCase()).filter((type) => type !== ""))];
  const unknown = types.filter((type) => !isActivityType(type));
  if (unknown.length > 0) {
    throw new DomainError("invalid-argument", "INVALID_ACTIVITY_TYPE", `Unknown activity type: ${unknown.join(", ")}`, {
      fieldViolations: unknown.map((type) => ({
        field: "type",
        message: `must be one of ${emailActivityTypes.join(", ")}`,
        code: "invalid_enum",
        received: JSON.stringify(type),
      })),
      suggestion: "GET /activity/types lists the types present in the project",
    });
  }
  return types as EmailActivityType[];
}

const floorTo = (time: number, step: number) => Math.floor(time / step) * step;

export interface BucketRange {
  interval: Interval;
  /** The start of the first bucket. */
  from: Date;
  /** The end of the last bucket (exclusive). */
  to: Date;
  buckets: number;
}

/**
 * The whole buckets that [from, to] touches, in UTC: from floored to its bucket, to's bucket
 * included. Unset `to` is now; unset `from` gives the default number of buckets ending with to's.
 */
export function bucketRangeOf(query: { from: Date | undefined; to: Date | undefined; interval: Interval }, now: Date): BucketRange {
  const step = intervalMs[query.interval];
  const to = query.to ?? now;
  const lastStart = floorTo(to.getTime(), step);
  const firstStart = query.from ? floorTo(query.from.getTime(), step) : lastStart - (defaultBuckets[query.interval] - 1) * step;
  if (query.from && query.from.getTime() > to.getTime()) {
    throw new DomainError("invalid-argument", "INVALID_RANGE", "from must not be after to", {
      fieldViolations: [{ field: "from", message: "must not be after to", code: "invalid_range", received: JSON.stringify(query.from) }],
    });
  }
  if (!isStorableInstant(new Date(firstStart)) || !isStorableInstant(new Date(lastStart + step))) {
    const field = query.from && !isStorableInstant(query.from) ? "from" : "to";
    throw new DomainError("invalid-argument", "INVALID_RANGE", "The range must fall within the years 1 to 9999", {
      fieldViolations: [
        { field, message: "must fall within the years 1 to 9999", code: "invalid_range", received: JSON.stringify(query[field] ?? null) },
      ],
    });
  }
  const buckets = (lastStart - firstStart) / step + 1;
  if (buckets > maxBuckets[query.interval]) {
    const most = query.interval === "hour" ? "31 days of hourly buckets" : "366 days of daily buckets";
    throw new DomainError("invalid-argument", "RANGE_TOO_LARGE", `The range spans ${buckets} ${query.interval}s; at most ${most}`, {
      fieldViolations: [{ field: "from", message: `at most ${most}`, code: "range_too_large", received: JSON.stringify(query.from) }],
      suggestion: query.interval === "hour" ? "Use interval=day for longer ranges" : "Ask for a shorter range",
    });
  }
  return { interval: query.interval, from: new Date(firstStart), to: new Date(lastStart + step), buckets };
}

/** What each timeseries bucket counts, and the activity type behind it. */
export const seriesTypes = {
  sent: "email.sent",
  delivered: "email.delivery",
  opened: "email.open",
  clicked: "email.click",
  bounced: "email.bounce",
  complained: "email.complaint",
} as const satisfies Record<string, EmailActivityType>;

export type Series = keyof typeof seriesTypes;

export type TimeseriesBucket = { start: Date } & Record<Series, number>;

/** Every bucket of the range, oldest first, with the counts found (bucket = floor(epoch ms / interval)) and zeros elsewhere. */
export function fillBuckets(
  range: BucketRange,
  counts: ReadonlyArray<{ bucket: number; type: string; count: number }>,
): TimeseriesBucket[] {
  const step = intervalMs[range.interval];
  const first = range.from.getTime() / step;
  const buckets: TimeseriesBucket[] = Array.from({ length: range.buckets }, (_, index) => ({
    start: new Date((first + index) * step),
    sent: 0,
    delivered: 0,
    opened: 0,
    clicked: 0,
    bounced: 0,
    complained: 0,
  }));
  const seriesOfType = new Map<string, Series>(Object.entries(seriesTypes).map(([series, type]) => [type, series as Series]));
  for (const { bucket, type, count } of counts) {
    const target = buckets[bucket - first];
    const series = seriesOfType.get(type);
    if (target && series) target[series] += count;
  }
  return buckets;
}

/** A fraction of the sent emails, to 4 decimals; 0 when nothing was sent. */
export const rateOf = (part: number, sent: number): number => (sent > 0 ? Math.round((part / sent) * 10_000) / 10_000 : 0);

/** The window of a recent count: unset is 24 hours; beyond 366 days (or below a second) is INVALID_WINDOW. */
export function recentWindowOf(requestedMs: number): number {
  if (requestedMs === 0) return defaultRecentWindowMs;
  if (requestedMs < 1_000 || requestedMs > maxRecentWindowMs) {
    throw new DomainError("invalid-argument", "INVALID_WINDOW", "The window must be between 1 second and 366 days");
  }
  return requestedMs;
}
