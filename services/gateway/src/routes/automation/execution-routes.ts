import type { JsonObject } from "@bufbuild/protobuf";
import { Type, type TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { projectOf } from "../../auth/authenticate.js";
import type { Upstreams } from "../../upstreams.js";
import { limitOf } from "../shared-schemas.js";
import { ExecutionSchema, ExecutionSummarySchema, toExecutionJson, toExecutionSummaryJson } from "./workflow-json.js";

const WorkflowId = Type.Object({ id: Type.String({ minLength: 1 }) });
const ExecutionParams = Type.Object({ id: Type.String({ minLength: 1 }), executionId: Type.String({ minLength: 1 }) });

export function registerExecutionRoutes(app: FastifyInstance, deps: { upstreams: Upstreams }): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const { workflows } = deps.upstreams;
  const config = { auth: "project" } as const;
  const tags = ["Workflows"];

  api.post(
    "/workflows/:id/executions",
    {
      config,
      schema: {
        tags,
        summary: "Start an execution for a contact (contactId or email), with an optional context",
        params: WorkflowId,
        body: Type.Object({
          contactId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
          email: Type.Optional(Type.String({ minLength: 3, maxLength: 254 })),
          context: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
        }),
        response: { 201: ExecutionSchema },
      },
    },
    async (request, reply) => {
      const { contactId, email, context } = request.body;
      const answer = await workflows.startExecution({
        projectId: projectOf(request),
        workflowId: request.params.id,
        contactId: contactId ?? "",
        email: email ?? "",
        context: (context ?? {}) as JsonObject,
      });
      return reply.status(201).send(toExecutionJson(answer.execution));
    },
  );

  api.get(
    "/workflows/:id/executions",
    {
      config,
      schema: {
        tags,
        summary: "The workflow's executions, newest first (cursor list), filterable by status",
        params: WorkflowId,
        querystring: Type.Object({
          status: Type.Optional(Type.String({ maxLength: 20 })),
          limit: Type.Optional(Type.String()),
          cursor: Type.Optional(Type.String({ maxLength: 64 })),
        }),
        response: {
          200: Type.Object({
            data: Type.Array(ExecutionSummarySchema),
            cursor: Type.String({ description: "The next page's cursor; empty on the last page" }),
            hasMore: Type.Boolean(),
            total: Type.Integer(),
          }),
        },
      },
    },
    async (request) => {
      const answer = await workflows.listExecutions({
        projectId: projectOf(request),
        workflowId: request.params.id,
        status: request.query.status ?? "",
        limit: limitOf(request.query.limit, 20),
        cursor: request.query.cursor ?? "",
      });
      return {
        data: answer.executions.map(toExecutionSummaryJson),
        cursor: answer.nextCursor,
        hasMore: answer.nextCursor !== "",
        total: Number(answer.total),
      };
    },
  );

  api.get(
    "/workflows/:id/executions/:executionId",
    {
      config,
      schema: { tags, summary: "One execution with its step history", params: ExecutionParams, response: { 200: ExecutionSchema } },
    },
    async (request) =>
      toExecutionJson(
        (
          await workflows.getExecution({
            projectId: projectOf(request),
            workflowId: request.params.id,
            executionId: request.params.executionId,
          })
        ).execution,
      ),
  );

  api.delete(
    "/workflows/:id/executions/:executionId",
    {
      config,
      schema: { tags, summary: "Cancel a RUNNING or WAITING execution", params: ExecutionParams, response: { 200: ExecutionSchema } },
    },
    async (request) =>
      toExecutionJson(
        (
          await workflows.cancelExecution({
            projectId: projectOf(request),
            workflowId: request.params.id,
            executionId: request.params.executionId,
          })
        ).execution,
      ),
  );

  api.post(
    "/workflows/:id/executions/cancel-all",
    {
      config,
      schema: {
        tags,
        summary: "Cancel every active execution of the workflow",
        params: WorkflowId,
        response: { 200: Type.Object({ cancelled: Type.Integer() }) },
      },
    },
    async (request) => {
      const answer = await workflows.cancelAllExecutions({ projectId: projectOf(request), workflowId: request.params.id });
      return { cancelled: Number(answer.cancelled) };
    },
  );
}
