import { Type, type TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FieldViolation } from "@herald/errors";
import type { RetentionWindow } from "@herald/proto/herald/common/v1/retention_pb";
import type { FastifyInstance } from "fastify";
import { projectOf } from "../../auth/authenticate.js";
import { HttpProblem } from "../../http/errors.js";
import type { Upstreams } from "../../upstreams.js";
import { Nullable } from "../shared-schemas.js";

/** The three windows, in GET's order; each field is a whole number of days. */
const kinds = ["trackedEventsDays", "emailContentDays", "activityDays"] as const;
type Kind = (typeof kinds)[number];

const perKind = <T extends Parameters<typeof Type.Object>[0][string]>(schema: T) =>
  Type.Object({ trackedEventsDays: schema, emailContentDays: schema, activityDays: schema });

const RetentionSettings = Type.Object({
  trackedEventsDays: Type.Integer({ description: "Tracked events are kept this many days" }),
  emailContentDays: Type.Integer({
    description: "An email's HTML, headers and attachments are kept this many days; then the email answers contentExpired",
  }),
  activityDays: Type.Integer({
    description: "The activity feed and the email records (metadata, status, counters) are kept this many days",
  }),
  custom: perKind(Type.Boolean({ description: "Whether the project set the window (false: the deployment's default applies)" })),
  defaults: perKind(Type.Integer()),
  bounds: perKind(Type.Object({ min: Type.Integer(), max: Type.Integer() })),
});

const daysSetting = Type.Optional(
  Nullable(
    Type.Integer({
      minimum: 1,
      description: "Days within bounds; null returns to the deployment's default; omitted keeps the current window",
    }),
  ),
);

const RetentionUpdate = Type.Object(
  { trackedEventsDays: daysSetting, emailContentDays: daysSetting, activityDays: daysSetting },
  { additionalProperties: false, minProperties: 1 },
);

type Windows = Record<Kind, RetentionWindow | undefined>;

function toJson(windows: Windows) {
  const pick = <T>(value: (window: RetentionWindow | undefined) => T) =>
    Object.fromEntries(kinds.map((kind) => [kind, value(windows[kind])])) as Record<Kind, T>;
  const days = pick((window) => window?.days ?? 0);
  return {
    ...days,
    custom: pick((window) => window?.custom ?? false),
    defaults: pick((window) => window?.defaultDays ?? 0),
    bounds: pick((window) => ({ min: window?.minDays ?? 0, max: window?.maxDays ?? 0 })),
  };
}

/**
 * The project's retention (docs/api-decisions.md "Retention"): tracked events are the contacts service's, email
 * content and activity delivery's; each answers its own windows and bounds, and the gateway composes them. A PUT is
 * checked whole against the bounds both answered before either is written, so that it is applied all or not at all.
 */
export function registerRetentionRoutes(app: FastifyInstance, deps: { upstreams: Upstreams }): void {
  const { events, activity } = deps.upstreams;
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ["Retention"];

  async function current(projectId: string): Promise<Windows> {
    const [contactsAnswer, deliveryAnswer] = await Promise.all([
      events.getEventRetention({ projectId }),
      activity.getEmailRetention({ projectId }),
    ]);
    return {
      trackedEventsDays: contactsAnswer.events,
      emailContentDays: deliveryAnswer.retention?.emailContent,
      activityDays: deliveryAnswer.retention?.activity,
    };
  }

  api.get(
    "/settings/retention",
    {
      config: { auth: "project" },
      schema: {
        tags,
        summary: "How long the project's tracked events, email content and activity are kept, with the deployment's defaults and bounds",
        response: { 200: RetentionSettings },
      },
    },
    async (request) => toJson(await current(projectOf(request))),
  );

  api.put(
    "/settings/retention",
    {
      config: { auth: "project" },
      schema: {
        tags,
        summary:
          "Set the project's windows in days, within the deployment's bounds and the email content's no longer than the activity's (400 RETENTION_OUT_OF_BOUNDS); null returns a window to the default",
        body: RetentionUpdate,
        response: { 200: RetentionSettings },
      },
    },
    async (request) => {
      const projectId = projectOf(request);
      const windows = await current(projectId);
      // What each window becomes: the body's value, the default for null, what the project had when omitted.
      const next = Object.fromEntries(
        kinds.map((kind) => {
          const sent = request.body[kind];
          const window = windows[kind];
          return [kind, sent === undefined ? (window?.custom ? window.days : undefined) : (sent ?? undefined)];
        }),
      ) as Record<Kind, number | undefined>;
      const violations: FieldViolation[] = [];
      for (const kind of kinds) {
        const days = next[kind];
        const window = windows[kind];
        if (request.body[kind] === undefined || days === undefined || !window) continue;
        if (days < window.minDays || days > window.maxDays) {
          violations.push({
            field: kind,
            message: `must be from ${window.minDays} to ${window.maxDays} days (this deployment's bounds)`,
            code: "out_of_bounds",
            received: String(days),
          });
        }
      }
      const effective = (kind: Kind) => next[kind] ?? windows[kind]?.defaultDays ?? 0;
      if (violations.length === 0 && effective("emailContentDays") > effective("activityDays")) {
        violations.push({
          field: "emailContentDays",
          message: `must be at most activityDays (${effective("activityDays")}): content expires before the email's record`,
          code: "out_of_bounds",
          received: String(effective("emailContentDays")),
        });
      }
      if (violations.length > 0) {
        throw new HttpProblem({
          statusCode: 400,
          code: "RETENTION_OUT_OF_BOUNDS",
          message: "A retention window lies outside this deployment's bounds",
          errors: violations,
          suggestion: "GET /settings/retention lists each window's bounds",
        });
      }
      const body = request.body;
      const [deliveryAnswer, contactsAnswer] = await Promise.all([
        body.emailContentDays !== undefined || body.activityDays !== undefined
          ? activity.setEmailRetention({ projectId, emailContentDays: next.emailContentDays, activityDays: next.activityDays })
          : undefined,
        body.trackedEventsDays !== undefined ? events.setEventRetention({ projectId, days: next.trackedEventsDays }) : undefined,
      ]);
      return toJson({
        trackedEventsDays: contactsAnswer?.events ?? windows.trackedEventsDays,
        emailContentDays: deliveryAnswer?.retention?.emailContent ?? windows.emailContentDays,
        activityDays: deliveryAnswer?.retention?.activity ?? windows.activityDays,
      });
    },
  );
}
