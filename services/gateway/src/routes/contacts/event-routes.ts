import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Type, type TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { createCoalescer } from "@herald/platform";
import type { TrackEventRequestSchema, TrackEventResponse } from "@herald/proto/herald/contacts/v1/events_service_pb";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { projectOf } from "../../auth/authenticate.js";
import type { Upstreams } from "../../upstreams.js";
import { workflowUsage } from "../automation/workflow-usage.js";
import { badQuery, iso, limitOf } from "../shared-schemas.js";
import { DataSchema, EventSchema, jsonDataOf, toEventJson, toUsagesJson, UsagesSchema } from "./json.js";

/** Tracks per TrackEvents call: enough to carry a busy event-loop turn, small enough to keep one call short. */
const trackBatchSize = 256;

/** The longest window of GET /analytics/top-events (ten years): a longer one would fall before the year 1 of a Timestamp. */
const maxTopEventDays = 3650;

const TrackBody = Type.Object({
  email: Type.String({ minLength: 1, maxLength: 254 }),
  event: Type.String({ minLength: 1, maxLength: 255 }),
  subscribed: Type.Optional(Type.Boolean()),
  data: Type.Optional(DataSchema),
});
const TrackAnswer = Type.Object({
  success: Type.Boolean(),
  data: Type.Object({ contact: Type.String(), event: Type.String(), timestamp: Type.String() }),
});
const EventList = Type.Object({ data: Type.Array(EventSchema), cursor: Type.String(), hasMore: Type.Boolean(), total: Type.Integer() });
const Paging = Type.Object({ limit: Type.Optional(Type.String()), cursor: Type.Optional(Type.String({ maxLength: 1000 })) });
const EventName = Type.Object({ eventName: Type.String({ minLength: 1, maxLength: 255 }) });

export function registerEventRoutes(app: FastifyInstance, deps: { upstreams: Upstreams }): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const { events } = deps.upstreams;
  const config = { auth: "project" } as const;
  const tags = ["Events"];
  // Concurrent /v1/track requests share TrackEvents calls.
  const trackEvent = createCoalescer<MessageInitShape<typeof TrackEventRequestSchema>, TrackEventResponse>({
    maxBatch: trackBatchSize,
    call: async (batch) => (await events.trackEvents({ events: batch })).results,
  });

  async function track(
    request: FastifyRequest<{ Body: { email: string; event: string; subscribed?: boolean; data?: Record<string, unknown> } }>,
  ) {
    const { email, event, subscribed, data } = request.body;
    const answer = await trackEvent({ projectId: projectOf(request), email, event, subscribed, data: jsonDataOf(data) });
    return {
      success: true,
      data: {
        contact: answer.contactId,
        event: answer.eventId,
        timestamp: answer.createdAt ? timestampDate(answer.createdAt).toISOString() : new Date().toISOString(),
      },
    };
  }

  api.post(
    "/v1/track",
    {
      config: { auth: "public", idempotency: true },
      schema: {
        tags,
        summary: "Track an event for a contact, creating or updating the contact (public key)",
        security: [{ publicKey: [] }],
        body: TrackBody,
        response: { 200: TrackAnswer },
      },
    },
    track,
  );

  api.post(
    "/events/track",
    {
      config,
      schema: {
        tags,
        summary: "Track an event from the dashboard (same rules as POST /v1/track)",
        body: TrackBody,
        response: { 200: TrackAnswer },
      },
    },
    track,
  );

  api.get(
    "/events",
    {
      config,
      schema: {
        tags,
        summary: "Tracked events, newest first (cursor list)",
        querystring: Type.Object({ ...Paging.properties, name: Type.Optional(Type.String({ maxLength: 255 })) }),
        response: { 200: EventList },
      },
    },
    async (request) => {
      const answer = await events.listEvents({
        projectId: projectOf(request),
        limit: limitOf(request.query.limit, 20),
        cursor: request.query.cursor ?? "",
        name: request.query.name ?? "",
      });
      return { data: answer.events.map(toEventJson), cursor: answer.cursor, hasMore: answer.hasMore, total: Number(answer.total) };
    },
  );

  api.get(
    "/events/stats",
    {
      config,
      schema: {
        tags,
        summary: "Event counts",
        response: {
          200: Type.Object({
            total: Type.Integer(),
            last24Hours: Type.Integer(),
            last7Days: Type.Integer(),
            last30Days: Type.Integer(),
            distinctNames: Type.Integer(),
            contactsWithEvents: Type.Integer(),
          }),
        },
      },
    },
    async (request) => {
      const stats = await events.getEventStats({ projectId: projectOf(request) });
      return {
        total: Number(stats.total),
        last24Hours: Number(stats.last24Hours),
        last7Days: Number(stats.last7Days),
        last30Days: Number(stats.last30Days),
        distinctNames: Number(stats.distinctNames),
        contactsWithEvents: Number(stats.contactsWithEvents),
      };
    },
  );

  const NameCounts = Type.Array(
    Type.Object({ name: Type.String(), count: Type.Integer(), lastSeenAt: Type.Union([Type.String(), Type.Null()]) }),
  );

  api.get(
    "/events/names",
    { config, schema: { tags, summary: "Event names with counts", response: { 200: Type.Object({ names: NameCounts }) } } },
    async (request) => {
      const answer = await events.listEventNames({ projectId: projectOf(request) });
      return { names: answer.names.map((name) => ({ name: name.name, count: Number(name.count), lastSeenAt: iso(name.lastSeenAt) })) };
    },
  );

  api.get(
    "/events/contact/:contactId",
    {
      config,
      schema: {
        tags,
        summary: "A contact's events, newest first (cursor list)",
        params: Type.Object({ contactId: Type.String({ minLength: 1 }) }),
        querystring: Paging,
        response: { 200: EventList },
      },
    },
    async (request) => {
      const answer = await events.listEvents({
        projectId: projectOf(request),
        contactId: request.params.contactId,
        limit: limitOf(request.query.limit, 20),
        cursor: request.query.cursor ?? "",
      });
      return { data: answer.events.map(toEventJson), cursor: answer.cursor, hasMore: answer.hasMore, total: Number(answer.total) };
    },
  );

  api.get(
    "/events/:eventName/usage",
    {
      config,
      schema: { tags, summary: "Segments, campaigns and workflows that use the event", params: EventName, response: { 200: UsagesSchema } },
    },
    async (request) => {
      const projectId = projectOf(request);
      const [own, workflows, campaigns] = await Promise.all([
        events.getEventUsage({ projectId, name: request.params.eventName }),
        workflowUsage(deps.upstreams, projectId, { case: "eventName", value: request.params.eventName }),
        deps.upstreams.campaigns.listEventUsage({ projectId, name: request.params.eventName }),
      ]);
      return {
        ...toUsagesJson(own.usages),
        campaigns: campaigns.campaigns.map(({ id, name }) => ({ id, name })),
        workflows: workflows.map(({ id, name }) => ({ id, name })),
      };
    },
  );

  api.delete(
    "/events/:eventName",
    {
      config,
      schema: {
        tags,
        summary: "Delete every event of a name",
        params: EventName,
        response: { 200: Type.Object({ event: Type.String(), deleted: Type.Integer() }) },
      },
    },
    async (request) => {
      const answer = await events.deleteEvents({ projectId: projectOf(request), name: request.params.eventName });
      return { event: request.params.eventName, deleted: Number(answer.deleted) };
    },
  );

  api.get(
    "/analytics/top-events",
    {
      config,
      schema: {
        tags: ["Analytics"],
        summary: "Most frequent custom event names",
        querystring: Type.Object({ limit: Type.Optional(Type.String()), days: Type.Optional(Type.String()) }),
        response: { 200: Type.Object({ events: Type.Array(Type.Object({ name: Type.String(), count: Type.Integer() })) }) },
      },
    },
    async (request) => {
      const days = Number.parseInt(request.query.days ?? "", 10);
      if (days > maxTopEventDays) throw badQuery("days", `must be at most ${maxTopEventDays}`, request.query.days ?? "");
      const answer = await events.getTopEvents({
        projectId: projectOf(request),
        limit: limitOf(request.query.limit, 10),
        since: Number.isFinite(days) && days > 0 ? timestampFromDate(new Date(Date.now() - days * 86_400_000)) : undefined,
      });
      return { events: answer.events.map((event) => ({ name: event.name, count: Number(event.count) })) };
    },
  );
}
