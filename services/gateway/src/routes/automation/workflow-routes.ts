import type { JsonObject } from "@bufbuild/protobuf";
import { Type, type TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { FastifyInstance } from "fastify";
import { projectOf } from "../../auth/authenticate.js";
import type { Upstreams } from "../../upstreams.js";
import { DateTime } from "../shared-schemas.js";
import {
  StepSchema,
  StepTypeSchema,
  TransitionSchema,
  toStepJson,
  toTransitionJson,
  toWorkflowJson,
  toWorkflowSummaryJson,
  WorkflowSchema,
  WorkflowSummarySchema,
} from "./workflow-json.js";

const WorkflowId = Type.Object({ id: Type.String({ minLength: 1 }) });
const StepParams = Type.Object({ id: Type.String({ minLength: 1 }), stepId: Type.String({ minLength: 1 }) });
const TransitionParams = Type.Object({ id: Type.String({ minLength: 1 }), transitionId: Type.String({ minLength: 1 }) });
const Name = Type.String({ minLength: 1, maxLength: 200 });
const Description = Type.String({ maxLength: 1000 });
const EventName = Type.String({ minLength: 1, maxLength: 255 });
const Config = Type.Record(Type.String(), Type.Unknown());
const Position = Type.Object({ x: Type.Number(), y: Type.Number() });
const Branch = Type.String({ maxLength: 20 });
const NoContent = { 204: Type.Null() };

export function registerWorkflowRoutes(app: FastifyInstance, deps: { upstreams: Upstreams }): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const { workflows, contacts, events } = deps.upstreams;
  const config = { auth: "project" } as const;
  const tags = ["Workflows"];

  api.get(
    "/workflows",
    {
      config,
      schema: { tags, summary: "Every workflow of the project, newest first", response: { 200: Type.Array(WorkflowSummarySchema) } },
    },
    async (request) => (await workflows.listWorkflows({ projectId: projectOf(request) })).workflows.map(toWorkflowSummaryJson),
  );

  api.get(
    "/workflows/fields",
    {
      config,
      schema: {
        tags,
        summary: "Fields CONDITION steps can test: the contact's (data.<key> included) and the project's event names",
        response: {
          200: Type.Object({
            contactFields: Type.Array(Type.Object({ field: Type.String(), type: Type.String() })),
            eventFields: Type.Array(Type.Object({ field: Type.String(), eventName: Type.String() })),
            variables: Type.Array(Type.String()),
          }),
        },
      },
    },
    async (request) => {
      const projectId = projectOf(request);
      const [fields, names] = await Promise.all([contacts.listFields({ projectId }), events.listEventNames({ projectId })]);
      const typeNames = ["unknown", "string", "number", "boolean", "date"];
      return {
        contactFields: fields.fields.map((field) => ({ field: field.field, type: typeNames[field.type] ?? "unknown" })),
        eventFields: names.names.map((name) => ({
          field: name.name.startsWith("email.") ? name.name : `event.${name.name}`,
          eventName: name.name,
        })),
        variables: ["trigger.data.<key>", "context.<key>"],
      };
    },
  );

  api.get(
    "/workflows/webhook-secret",
    {
      config,
      schema: {
        tags,
        summary: "The secret WEBHOOK steps sign X-Herald-Signature with (created on first read)",
        response: { 200: Type.Object({ secret: Type.String(), createdAt: DateTime }) },
      },
    },
    async (request) => {
      const answer = await workflows.getWebhookSecret({ projectId: projectOf(request) });
      return {
        secret: answer.secret,
        createdAt: answer.createdAt ? new Date(Number(answer.createdAt.seconds) * 1000).toISOString() : new Date().toISOString(),
      };
    },
  );

  api.post(
    "/workflows/webhook-secret/rotate",
    {
      config,
      schema: {
        tags,
        summary: "Replace the webhook signing secret",
        response: { 200: Type.Object({ secret: Type.String(), createdAt: DateTime }) },
      },
    },
    async (request) => {
      const answer = await workflows.rotateWebhookSecret({ projectId: projectOf(request) });
      return {
        secret: answer.secret,
        createdAt: answer.createdAt ? new Date(Number(answer.createdAt.seconds) * 1000).toISOString() : new Date().toISOString(),
      };
    },
  );

  api.post(
    "/workflows",
    {
      config,
      schema: {
        tags,
        summary: "Create a workflow (triggerType EVENT, enabled false)",
        body: Type.Object({
          name: Name,
          description: Type.Optional(Description),
          eventName: EventName,
          allowReentry: Type.Optional(Type.Boolean()),
        }),
        response: { 201: WorkflowSchema },
      },
    },
    async (request, reply) => {
      const { name, description, eventName, allowReentry } = request.body;
      const answer = await workflows.createWorkflow({
        projectId: projectOf(request),
        name,
        description: description ?? "",
        eventName,
        allowReentry: allowReentry ?? false,
      });
      return reply.status(201).send(toWorkflowJson(answer.workflow));
    },
  );

  api.get(
    "/workflows/:id",
    {
      config,
      schema: { tags, summary: "A workflow with its steps and transitions", params: WorkflowId, response: { 200: WorkflowSchema } },
    },
    async (request) => toWorkflowJson((await workflows.getWorkflow({ projectId: projectOf(request), id: request.params.id })).workflow),
  );

  api.patch(
    "/workflows/:id",
    {
      config,
      schema: {
        tags,
        summary: "Change name, description, trigger, enabled (the graph is checked when enabling) or allowReentry",
        params: WorkflowId,
        body: Type.Object({
          name: Type.Optional(Name),
          description: Type.Optional(Description),
          triggerType: Type.Optional(Type.Literal("EVENT")),
          triggerConfig: Type.Optional(Type.Object({ eventName: EventName })),
          eventName: Type.Optional(EventName),
          enabled: Type.Optional(Type.Boolean()),
          allowReentry: Type.Optional(Type.Boolean()),
        }),
        response: { 200: WorkflowSchema },
      },
    },
    async (request) => {
      const { name, description, triggerType, triggerConfig, eventName, enabled, allowReentry } = request.body;
      const answer = await workflows.updateWorkflow({
        projectId: projectOf(request),
        id: request.params.id,
        name,
        description,
        triggerType,
        eventName: triggerConfig?.eventName ?? eventName,
        enabled,
        allowReentry,
      });
      return toWorkflowJson(answer.workflow);
    },
  );

  api.delete(
    "/workflows/:id",
    { config, schema: { tags, summary: "Delete a workflow (409 while executions are active)", params: WorkflowId, response: NoContent } },
    async (request, reply) => {
      await workflows.deleteWorkflow({ projectId: projectOf(request), id: request.params.id });
      return reply.status(204).send(null);
    },
  );

  api.post(
    "/workflows/:id/steps",
    {
      config,
      schema: {
        tags,
        summary: "Add a step; its config is validated for its type",
        params: WorkflowId,
        body: Type.Object({
          type: StepTypeSchema,
          name: Name,
          config: Type.Optional(Config),
          position: Type.Optional(Position),
          templateId: Type.Optional(Type.String({ maxLength: 64 })),
        }),
        response: { 201: StepSchema },
      },
    },
    async (request, reply) => {
      const { type, name, config: stepConfig, position, templateId } = request.body;
      const answer = await workflows.createStep({
        projectId: projectOf(request),
        workflowId: request.params.id,
        type,
        name,
        config: (stepConfig ?? {}) as JsonObject,
        position,
        templateId: templateId ?? "",
      });
      return reply.status(201).send(toStepJson(answer.step));
    },
  );

  api.patch(
    "/workflows/:id/steps/:stepId",
    {
      config,
      schema: {
        tags,
        summary: "Change a step's name, config (replaced whole), position or template",
        params: StepParams,
        body: Type.Object({
          name: Type.Optional(Name),
          config: Type.Optional(Config),
          position: Type.Optional(Position),
          templateId: Type.Optional(Type.String({ maxLength: 64 })),
        }),
        response: { 200: StepSchema },
      },
    },
    async (request) => {
      const { name, config: stepConfig, position, templateId } = request.body;
      const answer = await workflows.updateStep({
        projectId: projectOf(request),
        workflowId: request.params.id,
        stepId: request.params.stepId,
        name,
        config: stepConfig as JsonObject | undefined,
        position,
        templateId,
      });
      return toStepJson(answer.step);
    },
  );

  api.delete(
    "/workflows/:id/steps/:stepId",
    {
      config,
      schema: {
        tags,
        summary: "Delete a step and its transitions; ?splice=true connects its predecessors to its successor",
        params: StepParams,
        querystring: Type.Object({ splice: Type.Optional(Type.Union([Type.Literal("true"), Type.Literal("false")])) }),
        response: NoContent,
      },
    },
    async (request, reply) => {
      await workflows.deleteStep({
        projectId: projectOf(request),
        workflowId: request.params.id,
        stepId: request.params.stepId,
        splice: request.query.splice === "true",
      });
      return reply.status(204).send(null);
    },
  );

  api.post(
    "/workflows/:id/transitions",
    {
      config,
      schema: {
        tags,
        summary: "Connect two steps; out of CONDITION give branch yes or no, out of WAIT_FOR_EVENT event or timeout",
        params: WorkflowId,
        body: Type.Object({
          fromStepId: Type.String({ minLength: 1, maxLength: 64 }),
          toStepId: Type.String({ minLength: 1, maxLength: 64 }),
          condition: Type.Optional(Type.Object({ branch: Branch })),
          branch: Type.Optional(Branch),
          priority: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
        }),
        response: { 201: TransitionSchema },
      },
    },
    async (request, reply) => {
      const { fromStepId, toStepId, condition, branch, priority } = request.body;
      const answer = await workflows.createTransition({
        projectId: projectOf(request),
        workflowId: request.params.id,
        fromStepId,
        toStepId,
        branch: condition?.branch ?? branch ?? "",
        priority: priority ?? 0,
      });
      return reply.status(201).send(toTransitionJson(answer.transition));
    },
  );

  api.delete(
    "/workflows/:id/transitions/:transitionId",
    { config, schema: { tags, summary: "Delete a transition", params: TransitionParams, response: NoContent } },
    async (request, reply) => {
      await workflows.deleteTransition({
        projectId: projectOf(request),
        workflowId: request.params.id,
        transitionId: request.params.transitionId,
      });
      return reply.status(204).send(null);
    },
  );
}
