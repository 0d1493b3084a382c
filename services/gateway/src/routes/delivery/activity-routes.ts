import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Type, type TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { TimeseriesInterval } from "@herald/proto/herald/delivery/v1/activity_service_pb";
import type { FastifyInstance } from "fastify";
import { projectOf } from "../../auth/authenticate.js";
import type { Upstreams } from "../../upstreams.js";
import { badQuery, iso, limitOf, Nullable } from "../shared-schemas.js";
import { ActivitySchema, toActivityJson } from "./activity-json.js";

const Counts = {
  total: Type.Integer(),
  last24Hours: Type.Integer(),
  last7Days: Type.Integer(),
  last30Days: Type.Integer(),
};

const Bucket = Type.Object({
  date: Type.String(),
  sent: Type.Integer(),
  delivered: Type.Integer(),
  opened: Type.Integer(),
  clicked: Type.Integer(),
  bounced: Type.Integer(),
  complained: Type.Integer(),
});

/** `type=email.open,email.click`: names are the delivery service's to check (400 INVALID_ACTIVITY_TYPE). */
const typesOf = (raw: string | undefined): string[] => (raw ?? "").split(",").filter((type) => type.trim() !== "");

const isoDatePattern = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})?)?$/i;

/**
 * An ISO 8601 date (`2026-03-01`, midnight UTC) or date-time (`2026-03-01T10:00:00Z`; no offset means UTC).
 * Anything else, or a day that does not exist, is a 400.
 */
function instantOf(parameter: string, raw: string | undefined): Date | undefined {
  if (raw === undefined || raw === "") return undefined;
  const match = isoDatePattern.exec(raw.trim());
  const invalid = () => badQuery(parameter, "must be an ISO 8601 date (2026-03-01) or date-time (2026-03-01T10:00:00Z)", raw);
  if (!match) throw invalid();
  const [, year, month, day, hour, minute, second, offset] = match;
  const calendar = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  if (calendar.getUTCMonth() !== Number(month) - 1 || calendar.getUTCDate() !== Number(day)) throw invalid();
  if (Number(hour ?? 0) > 23 || Number(minute ?? 0) > 59 || Number(second ?? 0) > 59) throw invalid();
  const text = hour === undefined ? `${year}-${month}-${day}T00:00:00Z` : offset ? raw.trim() : `${raw.trim()}Z`;
  const instant = new Date(text);
  if (Number.isNaN(instant.getTime())) throw invalid();
  return instant;
}

function intervalOf(raw: string | undefined): TimeseriesInterval {
  const value = (raw ?? "").trim().toLowerCase();
  if (value === "" || value === "day") return TimeseriesInterval.DAY;
  if (value === "hour") return TimeseriesInterval.HOUR;
  throw badQuery("interval", "must be day or hour", raw ?? "");
}

const maxWindowMinutes = 366 * 24 * 60;

/** `minutes` or `hours` (whole numbers, at most 366 days; not both); neither: 24 hours. */
function windowSecondsOf(query: { minutes?: string; hours?: string }): bigint {
  const { minutes, hours } = query;
  if (minutes !== undefined && hours !== undefined) throw badQuery("minutes", "give minutes or hours, not both", minutes);
  const [parameter, raw, perUnit] = minutes !== undefined ? ["minutes", minutes, 1] : ["hours", hours, 60];
  if (raw === undefined || raw === "") return 0n;
  const value = raw.trim();
  const most = maxWindowMinutes / perUnit;
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > most) {
    throw badQuery(parameter, `must be a whole number from 1 to ${most}`, raw);
  }
  return BigInt(Number(value) * perUnit * 60);
}

export function registerActivityRoutes(app: FastifyInstance, deps: { upstreams: Upstreams }): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const { activity } = deps.upstreams;
  const config = { auth: "project" } as const;
  const tags = ["Activity"];

  api.get(
    "/activity",
    {
      config,
      schema: {
        tags,
        summary: "Email activity (sends, deliveries, opens, clicks, bounces, complaints, failures, inbound), newest first (cursor list)",
        querystring: Type.Object({
          limit: Type.Optional(Type.String()),
          cursor: Type.Optional(Type.String({ maxLength: 1000 })),
          type: Type.Optional(Type.String({ maxLength: 1000 })),
          emailId: Type.Optional(Type.String({ maxLength: 64 })),
          contactId: Type.Optional(Type.String({ maxLength: 64 })),
        }),
        response: {
          200: Type.Object({ data: Type.Array(ActivitySchema), cursor: Type.String(), hasMore: Type.Boolean(), total: Type.Integer() }),
        },
      },
    },
    async (request) => {
      const { query } = request;
      const answer = await activity.listActivity({
        projectId: projectOf(request),
        limit: limitOf(query.limit, 20),
        cursor: query.cursor ?? "",
        types: typesOf(query.type),
        emailId: query.emailId ?? "",
        contactId: query.contactId ?? "",
      });
      return { data: answer.activities.map(toActivityJson), cursor: answer.cursor, hasMore: answer.hasMore, total: Number(answer.total) };
    },
  );

  api.get(
    "/activity/stats",
    {
      config,
      schema: {
        tags,
        summary: "Activity counts by type and period, and open, click, bounce and complaint rates",
        response: {
          200: Type.Object({
            ...Counts,
            byType: Type.Record(Type.String(), Type.Object(Counts)),
            emails: Type.Object({
              sent: Type.Integer(),
              opened: Type.Integer(),
              clicked: Type.Integer(),
              bounced: Type.Integer(),
              complained: Type.Integer(),
            }),
            rates: Type.Object({
              openRate: Type.Number(),
              clickRate: Type.Number(),
              bounceRate: Type.Number(),
              complaintRate: Type.Number(),
            }),
          }),
        },
      },
    },
    async (request) => {
      const stats = await activity.getActivityStats({ projectId: projectOf(request) });
      const emails = stats.emails;
      return {
        total: Number(stats.total),
        last24Hours: Number(stats.last24Hours),
        last7Days: Number(stats.last7Days),
        last30Days: Number(stats.last30Days),
        byType: Object.fromEntries(
          stats.byType.map((row) => [
            row.type,
            {
              total: Number(row.total),
              last24Hours: Number(row.last24Hours),
              last7Days: Number(row.last7Days),
              last30Days: Number(row.last30Days),
            },
          ]),
        ),
        emails: {
          sent: Number(emails?.sent ?? 0),
          opened: Number(emails?.opened ?? 0),
          clicked: Number(emails?.clicked ?? 0),
          bounced: Number(emails?.bounced ?? 0),
          complained: Number(emails?.complained ?? 0),
        },
        rates: {
          openRate: stats.rates?.openRate ?? 0,
          clickRate: stats.rates?.clickRate ?? 0,
          bounceRate: stats.rates?.bounceRate ?? 0,
          complaintRate: stats.rates?.complaintRate ?? 0,
        },
      };
    },
  );

  api.get(
    "/activity/recent-count",
    {
      config,
      schema: {
        tags,
        summary: "Activity in the last `minutes` or `hours` (default 24 hours, at most 366 days), optionally of some types",
        querystring: Type.Object({
          minutes: Type.Optional(Type.String()),
          hours: Type.Optional(Type.String()),
          type: Type.Optional(Type.String({ maxLength: 1000 })),
        }),
        response: { 200: Type.Object({ count: Type.Integer(), since: Type.String() }) },
      },
    },
    async (request) => {
      const answer = await activity.getRecentActivityCount({
        projectId: projectOf(request),
        windowSeconds: windowSecondsOf(request.query),
        types: typesOf(request.query.type),
      });
      return { count: Number(answer.count), since: iso(answer.since) ?? "" };
    },
  );

  api.get(
    "/activity/types",
    {
      config,
      schema: {
        tags,
        summary: "Activity types present in the project, most frequent first",
        response: {
          200: Type.Object({
            types: Type.Array(Type.Object({ type: Type.String(), count: Type.Integer(), lastSeenAt: Nullable(Type.String()) })),
          }),
        },
      },
    },
    async (request) => {
      const answer = await activity.listActivityTypes({ projectId: projectOf(request) });
      return { types: answer.types.map((row) => ({ type: row.type, count: Number(row.count), lastSeenAt: iso(row.lastSeenAt) })) };
    },
  );

  api.get(
    "/analytics/timeseries",
    {
      config,
      schema: {
        tags: ["Analytics"],
        summary: "Sends, deliveries, opens, clicks, bounces and complaints per UTC day or hour, zero-filled",
        querystring: Type.Object({
          from: Type.Optional(Type.String({ maxLength: 64 })),
          to: Type.Optional(Type.String({ maxLength: 64 })),
          interval: Type.Optional(Type.String({ maxLength: 16 })),
        }),
        response: {
          200: Type.Object({
            interval: Type.Union([Type.Literal("day"), Type.Literal("hour")]),
            from: Type.String(),
            to: Type.String(),
            buckets: Type.Array(Bucket),
          }),
        },
      },
    },
    async (request) => {
      const { query } = request;
      const from = instantOf("from", query.from);
      const to = instantOf("to", query.to);
      if (from && to && from.getTime() > to.getTime()) throw badQuery("from", "must not be after to", query.from ?? "");
      const answer = await activity.getTimeseries({
        projectId: projectOf(request),
        from: from && timestampFromDate(from),
        to: to && timestampFromDate(to),
        interval: intervalOf(query.interval),
      });
      return {
        interval: answer.interval === TimeseriesInterval.HOUR ? ("hour" as const) : ("day" as const),
        from: iso(answer.from) ?? "",
        to: iso(answer.to) ?? "",
        buckets: answer.buckets.map((bucket) => ({
          date: iso(bucket.start) ?? "",
          sent: Number(bucket.sent),
          delivered: Number(bucket.delivered),
          opened: Number(bucket.opened),
          clicked: Number(bucket.clicked),
          bounced: Number(bucket.bounced),
          complained: Number(bucket.complained),
        })),
      };
    },
  );
}
