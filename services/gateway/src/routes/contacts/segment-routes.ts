import { Type, type TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { projectOf } from "../../auth/authenticate.js";
import type { Upstreams } from "../../upstreams.js";
import { lenientPageOf, limitOf } from "../shared-schemas.js";
import { ContactSchema, jsonDataOf, toContactJson } from "./json.js";
import { ConditionSchema, isConditionObject, SegmentSchema, SegmentTypeSchema, segmentTypeOf, toSegmentJson } from "./segment-json.js";

/** SPEC.md "Limits": segment name and description lengths, addresses per members call. */
const segmentLimits = { name: 100, description: 500, membersPerCall: 500 };

const SegmentId = Type.Object({ id: Type.String({ minLength: 1 }) });
const Name = Type.String({ minLength: 1, maxLength: segmentLimits.name });
const Description = Type.String({ maxLength: segmentLimits.description });
const Emails = Type.Array(Type.String({ maxLength: 254 }), { minItems: 1, maxItems: segmentLimits.membersPerCall });

export function registerSegmentRoutes(app: FastifyInstance, deps: { upstreams: Upstreams }): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const { segments } = deps.upstreams;
  const config = { auth: "project" } as const;
  const tags = ["Segments"];

  api.get(
    "/segments",
    { config, schema: { tags, summary: "Every segment of the project, newest first", response: { 200: Type.Array(SegmentSchema) } } },
    async (request) => (await segments.listSegments({ projectId: projectOf(request) })).segments.map(toSegmentJson),
  );

  api.post(
    "/segments",
    {
      config,
      schema: {
        tags,
        summary: "Create a segment (DYNAMIC by condition, or STATIC by a list of members)",
        body: Type.Object({
          name: Name,
          description: Type.Optional(Description),
          type: Type.Optional(SegmentTypeSchema),
          // Any JSON here: SPEC.md answers a missing or non-object condition with the simple 400 body, not a 422.
          condition: Type.Optional(Type.Unknown()),
          trackMembership: Type.Optional(Type.Boolean()),
        }),
        response: { 201: SegmentSchema, 400: Type.Object({ error: Type.String() }) },
      },
    },
    async (request, reply) => {
      const { name, description, type = "DYNAMIC", condition, trackMembership } = request.body;
      if (type === "DYNAMIC" && !isConditionObject(condition)) {
        // SPEC.md names this simple body for a missing segment condition.
        return reply.status(400).send({ error: "condition is required for a DYNAMIC segment (an object with logic and groups)" });
      }
      const answer = await segments.createSegment({
        projectId: projectOf(request),
        name,
        description: description ?? "",
        type: segmentTypeOf(type),
        // A STATIC segment has no condition: whatever was sent is ignored.
        condition: type === "DYNAMIC" && isConditionObject(condition) ? condition : undefined,
        trackMembership: trackMembership ?? false,
      });
      return reply.status(201).send(toSegmentJson(answer.segment));
    },
  );

  api.get(
    "/segments/:id",
    { config, schema: { tags, summary: "One segment with its cached memberCount", params: SegmentId, response: { 200: SegmentSchema } } },
    async (request) => toSegmentJson((await segments.getSegment({ projectId: projectOf(request), id: request.params.id })).segment),
  );

  api.patch(
    "/segments/:id",
    {
      config,
      schema: {
        tags,
        summary: "Change a segment's name, description, condition (DYNAMIC only) or trackMembership",
        params: SegmentId,
        body: Type.Object({
          name: Type.Optional(Name),
          description: Type.Optional(Description),
          condition: Type.Optional(ConditionSchema),
          trackMembership: Type.Optional(Type.Boolean()),
        }),
        response: { 200: SegmentSchema },
      },
    },
    async (request) => {
      const { name, description, condition, trackMembership } = request.body;
      const answer = await segments.updateSegment({
        projectId: projectOf(request),
        id: request.params.id,
        name,
        description,
        condition: jsonDataOf(condition),
        trackMembership,
      });
      return toSegmentJson(answer.segment);
    },
  );

  api.delete(
    "/segments/:id",
    { config, schema: { tags, summary: "Delete a segment", params: SegmentId, response: { 204: Type.Null() } } },
    async (request, reply) => {
      await segments.deleteSegment({ projectId: projectOf(request), id: request.params.id });
      return reply.status(204).send(null);
    },
  );

  api.get(
    "/segments/:id/contacts",
    {
      config,
      schema: {
        tags,
        summary: "The segment's members, newest first (live for DYNAMIC segments; page list)",
        params: SegmentId,
        querystring: Type.Object({ page: Type.Optional(Type.String()), pageSize: Type.Optional(Type.String()) }),
        response: {
          200: Type.Object({ data: Type.Array(ContactSchema), total: Type.Integer(), page: Type.Integer(), pageSize: Type.Integer() }),
        },
      },
    },
    async (request) => {
      const answer = await segments.listSegmentContacts({
        projectId: projectOf(request),
        id: request.params.id,
        page: lenientPageOf("page", request.query.page),
        pageSize: limitOf(request.query.pageSize, 20),
      });
      return { data: answer.contacts.map(toContactJson), total: Number(answer.total), page: answer.page, pageSize: answer.pageSize };
    },
  );

  api.post(
    "/segments/:id/members",
    {
      config,
      schema: {
        tags,
        summary: "Add up to 500 addresses to a STATIC segment",
        params: SegmentId,
        body: Type.Object({
          emails: Emails,
          createMissing: Type.Optional(Type.Boolean()),
          subscribed: Type.Optional(Type.Boolean()),
        }),
        response: {
          200: Type.Object({ added: Type.Integer(), created: Type.Integer(), notFound: Type.Integer(), alreadyMembers: Type.Integer() }),
        },
      },
    },
    async (request) => {
      const { emails, createMissing, subscribed } = request.body;
      const answer = await segments.addSegmentMembers({
        projectId: projectOf(request),
        id: request.params.id,
        emails,
        createMissing: createMissing ?? false,
        subscribed,
      });
      return {
        added: Number(answer.added),
        created: Number(answer.created),
        notFound: Number(answer.notFound),
        alreadyMembers: Number(answer.alreadyMembers),
      };
    },
  );

  api.delete(
    "/segments/:id/members",
    {
      config,
      schema: {
        tags,
        summary: "Remove up to 500 addresses from a STATIC segment",
        params: SegmentId,
        body: Type.Object({ emails: Emails }),
        response: { 200: Type.Object({ removed: Type.Integer(), notMembers: Type.Integer() }) },
      },
    },
    async (request) => {
      const answer = await segments.removeSegmentMembers({
        projectId: projectOf(request),
        id: request.params.id,
        emails: request.body.emails,
      });
      return { removed: Number(answer.removed), notMembers: Number(answer.notMembers) };
    },
  );

  api.post(
    "/segments/:id/refresh",
    {
      config,
      schema: {
        tags,
        summary: "Recount memberCount (no events, no membership writes)",
        params: SegmentId,
        response: { 200: SegmentSchema },
      },
    },
    async (request) => toSegmentJson((await segments.refreshSegment({ projectId: projectOf(request), id: request.params.id })).segment),
  );

  api.post(
    "/segments/:id/compute",
    {
      config,
      schema: {
        tags,
        summary: "Store a tracked DYNAMIC segment's membership, emitting segment.<slug>.entry and .exit",
        params: SegmentId,
        response: { 200: Type.Object({ added: Type.Integer(), removed: Type.Integer(), total: Type.Integer() }) },
      },
    },
    async (request) => {
      const answer = await segments.computeSegment({ projectId: projectOf(request), id: request.params.id });
      return { added: Number(answer.added), removed: Number(answer.removed), total: Number(answer.total) };
    },
  );
}
