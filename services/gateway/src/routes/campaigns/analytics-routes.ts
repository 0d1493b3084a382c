import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Type, type TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { CampaignMetric } from "@herald/proto/herald/campaigns/v1/campaigns_service_pb";
import type { FastifyInstance } from "fastify";
import { projectOf } from "../../auth/authenticate.js";
import type { Upstreams } from "../../upstreams.js";
import { badQuery, DateTime, limitOf } from "../shared-schemas.js";
import { CampaignStatsSchema, toCampaignJson, toCampaignStatsJson } from "./campaign-json.js";

const metrics = {
  sent: CampaignMetric.SENT,
  opened: CampaignMetric.OPENED,
  clicked: CampaignMetric.CLICKED,
  openRate: CampaignMetric.OPEN_RATE,
  clickRate: CampaignMetric.CLICK_RATE,
} as const;
type MetricName = keyof typeof metrics;

function metricOf(raw: string | undefined): MetricName {
  if (raw === undefined || raw === "") return "opened";
  if (!Object.hasOwn(metrics, raw)) throw badQuery("metric", `must be one of ${Object.keys(metrics).join(", ")}`, raw);
  return raw as MetricName;
}

/** The campaign rows of the analytics endpoints, and GET /activity/upcoming (scheduled campaigns and active workflow executions). */
export function registerCampaignAnalyticsRoutes(app: FastifyInstance, deps: { upstreams: Upstreams }): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const { campaigns } = deps.upstreams;
  const config = { auth: "project" } as const;

  api.get(
    "/analytics/top-campaigns",
    {
      config,
      schema: {
        tags: ["Analytics"],
        summary: "Campaigns that have sent, best first by metric (sent, opened, clicked, openRate, clickRate; default opened)",
        querystring: Type.Object({ metric: Type.Optional(Type.String({ maxLength: 32 })), limit: Type.Optional(Type.String()) }),
        response: { 200: Type.Object({ metric: Type.String(), data: Type.Array(CampaignStatsSchema) }) },
      },
    },
    async (request) => {
      const metric = metricOf(request.query.metric);
      const answer = await campaigns.getTopCampaigns({
        projectId: projectOf(request),
        metric: metrics[metric],
        limit: Math.min(limitOf(request.query.limit, 5), 50),
      });
      return { metric, data: answer.campaigns.map(toCampaignStatsJson) };
    },
  );

  api.get(
    "/analytics/campaign-stats",
    {
      config,
      schema: {
        tags: ["Analytics"],
        summary: "Counters and rates of every campaign that has sent, newest first, with their totals",
        response: {
          200: Type.Object({
            data: Type.Array(CampaignStatsSchema),
            totals: Type.Object({
              campaigns: Type.Integer(),
              recipients: Type.Integer(),
              sent: Type.Integer(),
              delivered: Type.Integer(),
              opened: Type.Integer(),
              clicked: Type.Integer(),
              bounced: Type.Integer(),
            }),
          }),
        },
      },
    },
    async (request) => {
      const data = (await campaigns.listCampaignStats({ projectId: projectOf(request) })).campaigns.map(toCampaignStatsJson);
      const sum = (pick: (row: (typeof data)[number]) => number) => data.reduce((total, row) => total + pick(row), 0);
      return {
        data,
        totals: {
          campaigns: data.length,
          recipients: sum((row) => row.totalRecipients),
          sent: sum((row) => row.sent),
          delivered: sum((row) => row.delivered),
          opened: sum((row) => row.opened),
          clicked: sum((row) => row.clicked),
          bounced: sum((row) => row.bounced),
        },
      };
    },
  );

  api.get(
    "/activity/upcoming",
    {
      config,
      schema: {
        tags: ["Activity"],
        summary: "Upcoming scheduled sends (scheduled campaigns, soonest first) and active executions",
        querystring: Type.Object({ limit: Type.Optional(Type.String()) }),
        response: {
          200: Type.Object({
            data: Type.Array(
              Type.Union([
                Type.Object({
                  type: Type.Literal("campaign"),
                  id: Type.String(),
                  name: Type.String(),
                  scheduledFor: DateTime,
                  audienceType: Type.String(),
                }),
                Type.Object({
                  type: Type.Literal("workflow"),
                  id: Type.String(),
                  name: Type.String(),
                  scheduledFor: DateTime,
                  executionId: Type.String(),
                  contactId: Type.String(),
                  stepId: Type.String(),
                  stepType: Type.String(),
                  status: Type.String({ description: "The execution's status: RUNNING or WAITING" }),
                  waitingFor: Type.Union([Type.String(), Type.Null()], {
                    description: "The event a WAIT_FOR_EVENT step waits for; null otherwise",
                  }),
                }),
              ]),
            ),
          }),
        },
      },
    },
    async (request) => {
      const projectId = projectOf(request);
      const limit = limitOf(request.query.limit, 20);
      // Scheduled campaigns from campaigns, active executions (running, or waiting on a delay or an event) from automation, merged soonest first.
      const [scheduled, waiting] = await Promise.all([
        campaigns.listUpcomingCampaigns({ projectId, limit }),
        deps.upstreams.workflows.listUpcoming({ projectId, limit }),
      ]);
      const campaignItems = scheduled.campaigns.map(toCampaignJson).map((campaign) => ({
        type: "campaign" as const,
        id: campaign.id,
        name: campaign.name,
        scheduledFor: campaign.scheduledFor ?? "",
        audienceType: campaign.audienceType,
      }));
      const workflowItems = waiting.steps.map((step) => ({
        type: "workflow" as const,
        id: step.workflowId,
        name: step.workflowName,
        scheduledFor: step.dueAt ? timestampDate(step.dueAt).toISOString() : "",
        executionId: step.executionId,
        contactId: step.contactId,
        stepId: step.stepId,
        stepType: step.stepType,
        status: step.executionStatus,
        waitingFor: step.waitingFor || null,
      }));
      const data = [...campaignItems, ...workflowItems].sort((a, b) => a.scheduledFor.localeCompare(b.scheduledFor)).slice(0, limit);
      return { data };
    },
  );
}
