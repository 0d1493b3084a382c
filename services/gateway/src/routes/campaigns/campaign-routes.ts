import type { JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Static, Type, type TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { CampaignSort, CampaignStatus, SortDirection } from "@herald/proto/herald/campaigns/v1/campaigns_service_pb";
import type { FastifyInstance } from "fastify";
import { projectOf } from "../../auth/authenticate.js";
import { HttpProblem } from "../../http/errors.js";
import type { Upstreams } from "../../upstreams.js";
import { EditorSourceRef, editorJsonOf } from "../editor-source.js";
import { badQuery, Nullable, positiveIntegerOf } from "../shared-schemas.js";
import {
  AudienceTypeSchema,
  audienceToProto,
  CampaignSchema,
  CampaignStatsSchema,
  CampaignStatusSchema,
  CampaignTypeSchema,
  type StatusName,
  statusNames,
  statusToProto,
  toCampaignJson,
  toCampaignStatsJson,
  typeToProto,
} from "./campaign-json.js";

const CampaignId = Type.Object({ id: Type.String({ minLength: 1 }) });
// Lengths are the campaigns service's to check (422 with its rules); these only keep absurd bodies out.
const Text = Type.String({ maxLength: 1_000_000 });
const OptionalText = Type.Optional(Type.Union([Text, Type.Null()]));

const CampaignFields = Type.Object({
  name: Type.Optional(Text),
  description: OptionalText,
  subject: Type.Optional(Text),
  body: Type.Optional(Text),
  from: OptionalText,
  fromName: OptionalText,
  replyTo: OptionalText,
  type: Type.Optional(CampaignTypeSchema),
  audienceType: Type.Optional(AudienceTypeSchema),
  segmentId: OptionalText,
  audienceCondition: Type.Optional(Type.Unknown()),
  editor: Type.Optional(Nullable(EditorSourceRef)),
});

/** status: one of the five names (any case); another value is a 400 (SPEC.md). */
function statusFilterOf(raw: string | undefined): CampaignStatus {
  if (raw === undefined || raw === "") return CampaignStatus.UNSPECIFIED;
  const name = raw.trim().toUpperCase();
  if (!(statusNames as readonly string[]).includes(name)) throw badQuery("status", `must be one of ${statusNames.join(", ")}`, raw);
  return statusToProto[name as StatusName];
}

/** Lenient, as on GET /templates: an unknown sort or direction falls back to the default. */
const sortOf = (raw: string | undefined) =>
  raw === "name" ? CampaignSort.NAME : raw === "updatedAt" ? CampaignSort.UPDATED_AT : CampaignSort.CREATED_AT;
const directionOf = (raw: string | undefined) => (raw?.toLowerCase() === "asc" ? SortDirection.ASC : SortDirection.DESC);

const isObject = (value: unknown): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value);

function fieldsOf(body: Static<typeof CampaignFields>) {
  const { audienceCondition } = body;
  if (audienceCondition !== undefined && audienceCondition !== null && !isObject(audienceCondition)) {
    throw new HttpProblem({
      statusCode: 422,
      code: "VALIDATION_ERROR",
      message: "Invalid audienceCondition: it must be a condition tree object",
      errors: [
        { field: "audienceCondition", message: "must be an object", code: "invalid_type", received: JSON.stringify(audienceCondition) },
      ],
    });
  }
  return {
    name: body.name,
    description: body.description ?? undefined,
    subject: body.subject,
    body: body.body,
    from: body.from ?? undefined,
    fromName: body.fromName ?? undefined,
    replyTo: body.replyTo ?? undefined,
    type: body.type ? typeToProto[body.type] : undefined,
    audienceType: body.audienceType ? audienceToProto[body.audienceType] : undefined,
    segmentId: body.segmentId ?? undefined,
    audienceCondition: isObject(audienceCondition) ? audienceCondition : undefined,
    editorJson: editorJsonOf(body.editor),
  };
}

/** Any value Date accepts, as SPEC.md allows; an unparsable one is a 400. */
function scheduledForOf(raw: string | null | undefined): Date | undefined {
  if (raw === undefined || raw === null) return undefined;
  const parsed = new Date(raw);
  if (raw.trim() === "" || Number.isNaN(parsed.getTime())) {
    throw new HttpProblem({
      statusCode: 400,
      code: "BAD_REQUEST",
      message: "Invalid scheduledFor: it is not a date",
      errors: [
        {
          field: "scheduledFor",
          message: "must be a date-time such as 2026-12-01T09:00:00Z",
          code: "invalid_date",
          received: JSON.stringify(raw),
        },
      ],
    });
  }
  return parsed;
}

export function registerCampaignRoutes(app: FastifyInstance, deps: { upstreams: Upstreams }): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const { campaigns } = deps.upstreams;
  const config = { auth: "project" } as const;
  const tags = ["Campaigns"];

  api.get(
    "/campaigns",
    {
      config,
      schema: {
        tags,
        summary: "Campaigns, newest first by default (offset list)",
        querystring: Type.Object({
          page: Type.Optional(Type.String()),
          pageSize: Type.Optional(Type.String()),
          status: Type.Optional(Type.String()),
          search: Type.Optional(Type.String({ maxLength: 200 })),
          sort: Type.Optional(Type.String()),
          dir: Type.Optional(Type.String()),
        }),
        response: {
          200: Type.Object({
            data: Type.Array(CampaignSchema),
            page: Type.Integer(),
            pageSize: Type.Integer(),
            total: Type.Integer(),
            totalPages: Type.Integer(),
          }),
        },
      },
    },
    async (request) => {
      const { query } = request;
      const answer = await campaigns.listCampaigns({
        projectId: projectOf(request),
        page: positiveIntegerOf("page", query.page),
        pageSize: positiveIntegerOf("pageSize", query.pageSize),
        status: statusFilterOf(query.status),
        search: query.search ?? "",
        sort: sortOf(query.sort),
        direction: directionOf(query.dir),
      });
      return {
        data: answer.campaigns.map(toCampaignJson),
        page: answer.page,
        pageSize: answer.pageSize,
        total: Number(answer.total),
        totalPages: answer.totalPages,
      };
    },
  );

  api.post(
    "/campaigns",
    {
      config,
      schema: {
        tags,
        summary: "Create a DRAFT campaign (201); the sender's domain must be verified for the project",
        body: CampaignFields,
        response: { 201: Type.Object({ success: Type.Literal(true), data: CampaignSchema }) },
      },
    },
    async (request, reply) => {
      const answer = await campaigns.createCampaign({ projectId: projectOf(request), fields: fieldsOf(request.body) });
      return reply.status(201).send({ success: true as const, data: toCampaignJson(answer.campaign) });
    },
  );

  api.get(
    "/campaigns/:id",
    { config, schema: { tags, summary: "One campaign", params: CampaignId, response: { 200: CampaignSchema } } },
    async (request) => toCampaignJson((await campaigns.getCampaign({ projectId: projectOf(request), id: request.params.id })).campaign),
  );

  api.put(
    "/campaigns/:id",
    {
      config,
      schema: {
        tags,
        summary: "Replace a DRAFT or SCHEDULED campaign (409 otherwise); checked as on create",
        params: CampaignId,
        body: CampaignFields,
        response: { 200: CampaignSchema },
      },
    },
    async (request) => {
      const answer = await campaigns.updateCampaign({
        projectId: projectOf(request),
        id: request.params.id,
        fields: fieldsOf(request.body),
      });
      return toCampaignJson(answer.campaign);
    },
  );

  api.delete(
    "/campaigns/:id",
    {
      config,
      schema: { tags, summary: "Delete a campaign; 409 while SCHEDULED or SENDING", params: CampaignId, response: { 204: Type.Null() } },
    },
    async (request, reply) => {
      await campaigns.deleteCampaign({ projectId: projectOf(request), id: request.params.id });
      return reply.status(204).send(null);
    },
  );

  api.post(
    "/campaigns/:id/duplicate",
    {
      config,
      schema: { tags, summary: 'A DRAFT copy named "<name> (copy)" (201)', params: CampaignId, response: { 201: CampaignSchema } },
    },
    async (request, reply) => {
      const answer = await campaigns.duplicateCampaign({ projectId: projectOf(request), id: request.params.id });
      return reply.status(201).send(toCampaignJson(answer.campaign));
    },
  );

  api.post(
    "/campaigns/:id/send",
    {
      config,
      schema: {
        tags,
        summary: "Send a DRAFT now, or schedule it with scheduledFor (a past instant sends now; at most 365 days ahead)",
        params: CampaignId,
        body: Type.Optional(
          Type.Union([
            Type.Object({ scheduledFor: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()])) }),
            Type.Null(),
          ]),
        ),
        response: {
          200: Type.Object({
            success: Type.Literal(true),
            data: Type.Object({
              id: Type.String(),
              name: Type.String(),
              status: CampaignStatusSchema,
              scheduledFor: Type.Union([Type.String(), Type.Null()]),
            }),
            message: Type.String(),
          }),
        },
      },
    },
    async (request) => {
      const scheduledFor = scheduledForOf(request.body?.scheduledFor);
      const answer = await campaigns.sendCampaign({
        projectId: projectOf(request),
        id: request.params.id,
        ...(scheduledFor ? { scheduledFor: timestampFromDate(scheduledFor) } : {}),
      });
      const campaign = toCampaignJson(answer.campaign);
      const scheduled = campaign.status === "SCHEDULED";
      return {
        success: true as const,
        data: { id: campaign.id, name: campaign.name, status: campaign.status, scheduledFor: campaign.scheduledFor },
        message: scheduled ? `Campaign scheduled for ${campaign.scheduledFor}` : "Campaign is being sent",
      };
    },
  );

  api.post(
    "/campaigns/:id/cancel",
    {
      config,
      schema: {
        tags,
        summary: "Cancel a SCHEDULED or SENDING campaign: emails still queued are withdrawn, those sent stay sent",
        params: CampaignId,
        response: { 200: CampaignSchema },
      },
    },
    async (request) => toCampaignJson((await campaigns.cancelCampaign({ projectId: projectOf(request), id: request.params.id })).campaign),
  );

  api.post(
    "/campaigns/:id/test",
    {
      config,
      schema: {
        tags,
        summary: "Send one test email of the campaign to an address; status and counters stay as they are",
        params: CampaignId,
        body: Type.Object({ email: Type.String({ maxLength: 320 }) }),
        response: {
          200: Type.Object({ success: Type.Literal(true), data: Type.Object({ emailId: Type.String(), email: Type.String() }) }),
        },
      },
    },
    async (request) => {
      const answer = await campaigns.sendTestEmail({ projectId: projectOf(request), id: request.params.id, email: request.body.email });
      return { success: true as const, data: { emailId: answer.emailId, email: request.body.email.trim() } };
    },
  );

  api.get(
    "/campaigns/:id/stats",
    {
      config,
      schema: { tags, summary: "Counters and rates of a campaign", params: CampaignId, response: { 200: CampaignStatsSchema } },
    },
    async (request) =>
      toCampaignStatsJson((await campaigns.getCampaignStats({ projectId: projectOf(request), id: request.params.id })).stats),
  );
}
