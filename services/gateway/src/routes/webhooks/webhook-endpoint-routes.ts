import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Type, type TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { Attempt, Endpoint, Message } from "@herald/proto/herald/webhooks/v1/webhooks_service_pb";
import type { FastifyInstance } from "fastify";
import { projectOf } from "../../auth/authenticate.js";
import { HttpProblem } from "../../http/errors.js";
import type { Upstreams } from "../../upstreams.js";
import { badQuery, iso, limitOf, Nullable } from "../shared-schemas.js";

const endpointFields = {
  id: Type.String(),
  url: Type.String(),
  description: Type.String(),
  eventTypes: Type.Array(Type.String()),
  enabled: Type.Boolean(),
  disabledReason: Nullable(Type.String()),
  secretPrefix: Type.String(),
  createdAt: Type.String(),
  updatedAt: Type.String(),
  failingSince: Nullable(Type.String()),
  stats: Type.Object({ pending: Type.Integer(), delivered: Type.Integer(), failed: Type.Integer() }),
};
const EndpointSchema = Type.Object(endpointFields);

const AttemptSchema = Type.Object({
  at: Type.String(),
  statusCode: Nullable(Type.Integer()),
  durationMs: Type.Integer(),
  response: Type.String(),
  error: Nullable(Type.String()),
});

const WebhookEventSchema = Type.Object({ type: Type.String(), timestamp: Type.String(), data: Type.Record(Type.String(), Type.Unknown()) });

const MessageSchema = Type.Object({
  id: Type.String(),
  eventType: Type.String(),
  eventId: Type.String(),
  status: Type.Union([Type.Literal("pending"), Type.Literal("delivering"), Type.Literal("delivered"), Type.Literal("failed")]),
  attempts: Type.Array(AttemptSchema),
  nextAttemptAt: Nullable(Type.String()),
  createdAt: Type.String(),
  deliveredAt: Nullable(Type.String()),
  payload: WebhookEventSchema,
});

const EndpointId = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) });
const MessageId = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 200 }),
  messageId: Type.String({ minLength: 1, maxLength: 200 }),
});
// Lengths and values are the webhooks service's to check (422 with its rules); these only keep absurd bodies out.
const Url = Type.String({ maxLength: 100_000 });
const Description = Type.String({ maxLength: 100_000 });
const EventTypes = Type.Array(Type.String({ maxLength: 1_000 }), { maxItems: 1_000 });
const CursorQuery = { limit: Type.Optional(Type.String()), cursor: Type.Optional(Type.String({ maxLength: 1_000 })) };

const toEndpointJson = (endpoint: Endpoint | undefined) => ({
  id: endpoint?.id ?? "",
  url: endpoint?.url ?? "",
  description: endpoint?.description ?? "",
  eventTypes: [...(endpoint?.eventTypes ?? [])],
  enabled: endpoint?.enabled ?? false,
  disabledReason: endpoint?.disabledReason || null,
  secretPrefix: endpoint?.secretPrefix ?? "",
  createdAt: iso(endpoint?.createdAt) ?? "",
  updatedAt: iso(endpoint?.updatedAt) ?? "",
  failingSince: iso(endpoint?.failingSince),
  stats: {
    pending: Number(endpoint?.stats?.pending ?? 0),
    delivered: Number(endpoint?.stats?.delivered ?? 0),
    failed: Number(endpoint?.stats?.failed ?? 0),
  },
});

const toAttemptJson = (attempt: Attempt) => ({
  at: iso(attempt.at) ?? "",
  statusCode: attempt.statusCode ?? null,
  durationMs: Number(attempt.durationMs),
  response: attempt.response,
  error: attempt.error || null,
});

const statuses = ["pending", "delivering", "delivered", "failed"] as const;
type StatusName = (typeof statuses)[number];

const toMessageJson = (message: Message | undefined) => {
  const payload = message?.payload ?? {};
  return {
    id: message?.id ?? "",
    eventType: message?.eventType ?? "",
    eventId: message?.eventId ?? "",
    status: (statuses as readonly string[]).includes(message?.status ?? "") ? (message?.status as StatusName) : "pending",
    attempts: (message?.attempts ?? []).map(toAttemptJson),
    nextAttemptAt: iso(message?.nextAttemptAt),
    createdAt: iso(message?.createdAt) ?? "",
    deliveredAt: iso(message?.deliveredAt),
    payload: {
      type: typeof payload.type === "string" ? payload.type : "",
      timestamp: typeof payload.timestamp === "string" ? payload.timestamp : "",
      data: typeof payload.data === "object" && payload.data !== null && !Array.isArray(payload.data) ? payload.data : {},
    },
  };
};

/** status of the messages list: one of the four, or a 400. */
function statusFilterOf(raw: string | undefined): string {
  if (raw === undefined || raw === "") return "";
  if (!(statuses as readonly string[]).includes(raw)) throw badQuery("status", `must be one of ${statuses.join(", ")}`, raw);
  return raw;
}

function sinceOf(raw: string): Date {
  const since = new Date(raw);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(raw) || Number.isNaN(since.getTime())) {
    throw new HttpProblem({
      statusCode: 422,
      code: "VALIDATION_ERROR",
      message: "since must be an ISO 8601 date-time",
      errors: [
        { field: "since", message: "must be an ISO 8601 date-time", code: "invalid_date", received: JSON.stringify(raw.slice(0, 100)) },
      ],
    });
  }
  return since;
}

/**
 * Outbound webhooks (docs/api-decisions.md "Outbound webhooks"): a project's endpoints, their messages and attempts.
 * Settings routes: admins, owners and the secret key manage; members read, and never see a secret (only the answers
 * of creation and rotation carry one).
 */
export function registerWebhookEndpointRoutes(app: FastifyInstance, deps: { upstreams: Upstreams }): void {
  const { webhooks } = deps.upstreams;
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ["Webhooks"];
  const config = { auth: "project" as const };

  api.get(
    "/settings/webhooks/event-types",
    {
      config,
      schema: {
        tags,
        summary: "Every webhook event type, with a description and an example body",
        response: {
          200: Type.Object({
            data: Type.Array(Type.Object({ type: Type.String(), description: Type.String(), example: WebhookEventSchema })),
          }),
        },
      },
    },
    async () => {
      const { eventTypes } = await webhooks.listEventTypes({});
      return {
        data: eventTypes.map((entry) => ({
          type: entry.type,
          description: entry.description,
          example: toMessageJson({ payload: entry.example } as Message).payload,
        })),
      };
    },
  );

  api.get(
    "/settings/webhooks",
    {
      config,
      schema: {
        tags,
        summary: "The project's webhook endpoints, oldest first (cursor list)",
        querystring: Type.Object(CursorQuery),
        response: {
          200: Type.Object({ data: Type.Array(EndpointSchema), cursor: Type.String(), hasMore: Type.Boolean(), total: Type.Integer() }),
        },
      },
    },
    async (request) => {
      const answer = await webhooks.listEndpoints({
        projectId: projectOf(request),
        limit: limitOf(request.query.limit, 20),
        cursor: request.query.cursor ?? "",
      });
      return { data: answer.endpoints.map(toEndpointJson), cursor: answer.cursor, hasMore: answer.hasMore, total: Number(answer.total) };
    },
  );

  api.post(
    "/settings/webhooks",
    {
      config,
      schema: {
        tags,
        summary: "Create an endpoint (201); the answer carries its whole signing secret, shown this once",
        body: Type.Object({
          url: Url,
          description: Type.Optional(Description),
          eventTypes: Type.Optional(EventTypes),
          enabled: Type.Optional(Type.Boolean()),
        }),
        response: { 201: Type.Object({ ...endpointFields, secret: Type.String() }) },
      },
    },
    async (request, reply) => {
      const { body } = request;
      const answer = await webhooks.createEndpoint({
        projectId: projectOf(request),
        url: body.url,
        description: body.description ?? "",
        eventTypes: body.eventTypes ?? [],
        ...(body.enabled === undefined ? {} : { enabled: body.enabled }),
      });
      return reply.status(201).send({ ...toEndpointJson(answer.endpoint), secret: answer.secret });
    },
  );

  api.get(
    "/settings/webhooks/:id",
    { config, schema: { tags, summary: "One endpoint (without its secret)", params: EndpointId, response: { 200: EndpointSchema } } },
    async (request) => toEndpointJson((await webhooks.getEndpoint({ projectId: projectOf(request), id: request.params.id })).endpoint),
  );

  api.patch(
    "/settings/webhooks/:id",
    {
      config,
      schema: {
        tags,
        summary: "Change an endpoint; enabling a disabled one clears disabledReason and replays nothing (see recover)",
        params: EndpointId,
        body: Type.Object({
          url: Type.Optional(Url),
          description: Type.Optional(Description),
          eventTypes: Type.Optional(EventTypes),
          enabled: Type.Optional(Type.Boolean()),
        }),
        response: { 200: EndpointSchema },
      },
    },
    async (request) => {
      const { body } = request;
      const answer = await webhooks.updateEndpoint({
        projectId: projectOf(request),
        id: request.params.id,
        ...(body.url === undefined ? {} : { url: body.url }),
        ...(body.description === undefined ? {} : { description: body.description }),
        eventTypes: body.eventTypes ?? [],
        updateEventTypes: body.eventTypes !== undefined,
        ...(body.enabled === undefined ? {} : { enabled: body.enabled }),
      });
      return toEndpointJson(answer.endpoint);
    },
  );

  api.delete(
    "/settings/webhooks/:id",
    { config, schema: { tags, summary: "Delete an endpoint and its messages (204)", params: EndpointId } },
    async (request, reply) => {
      await webhooks.deleteEndpoint({ projectId: projectOf(request), id: request.params.id });
      return reply.status(204).send();
    },
  );

  api.post(
    "/settings/webhooks/:id/rotate-secret",
    {
      config,
      schema: {
        tags,
        summary: "A new signing secret; the previous one keeps signing beside it until previousSecretExpiresAt",
        params: EndpointId,
        response: { 200: Type.Object({ secret: Type.String(), previousSecretExpiresAt: Type.String() }) },
      },
    },
    async (request) => {
      const answer = await webhooks.rotateSecret({ projectId: projectOf(request), id: request.params.id });
      return { secret: answer.secret, previousSecretExpiresAt: iso(answer.previousSecretExpiresAt) ?? "" };
    },
  );

  api.get(
    "/settings/webhooks/:id/messages",
    {
      config,
      schema: {
        tags,
        summary: "The endpoint's messages with their attempts, newest first (cursor list)",
        params: EndpointId,
        querystring: Type.Object({ ...CursorQuery, status: Type.Optional(Type.String({ maxLength: 100 })) }),
        response: {
          200: Type.Object({ data: Type.Array(MessageSchema), cursor: Type.String(), hasMore: Type.Boolean(), total: Type.Integer() }),
        },
      },
    },
    async (request) => {
      const answer = await webhooks.listMessages({
        projectId: projectOf(request),
        endpointId: request.params.id,
        limit: limitOf(request.query.limit, 20),
        cursor: request.query.cursor ?? "",
        status: statusFilterOf(request.query.status),
      });
      return { data: answer.messages.map(toMessageJson), cursor: answer.cursor, hasMore: answer.hasMore, total: Number(answer.total) };
    },
  );

  api.post(
    "/settings/webhooks/:id/messages/:messageId/retry",
    {
      config,
      schema: { tags, summary: "Send one message again now (202)", params: MessageId, response: { 202: MessageSchema } },
    },
    async (request, reply) => {
      const answer = await webhooks.retryMessage({
        projectId: projectOf(request),
        endpointId: request.params.id,
        messageId: request.params.messageId,
      });
      return reply.status(202).send(toMessageJson(answer.message));
    },
  );

  api.post(
    "/settings/webhooks/:id/recover",
    {
      config,
      schema: {
        tags,
        summary: "Send again every message that failed since a time (202)",
        params: EndpointId,
        body: Type.Object({ since: Type.String({ maxLength: 100 }) }),
        response: { 202: Type.Object({ queued: Type.Integer() }) },
      },
    },
    async (request, reply) => {
      const since = sinceOf(request.body.since);
      const answer = await webhooks.recoverMessages({
        projectId: projectOf(request),
        endpointId: request.params.id,
        since: timestampFromDate(since),
      });
      return reply.status(202).send({ queued: Number(answer.queued) });
    },
  );

  api.post(
    "/settings/webhooks/:id/test",
    {
      config,
      schema: {
        tags,
        summary: "Send an example event of a type to the endpoint now (202)",
        params: EndpointId,
        body: Type.Object({ eventType: Type.String({ maxLength: 1_000 }) }),
        response: { 202: MessageSchema },
      },
    },
    async (request, reply) => {
      const answer = await webhooks.sendTestMessage({
        projectId: projectOf(request),
        endpointId: request.params.id,
        eventType: request.body.eventType,
      });
      return reply.status(202).send(toMessageJson(answer.message));
    },
  );
}
