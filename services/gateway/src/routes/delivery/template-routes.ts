import { Type, type TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { type Template, TemplateSort, TemplateSortDirection, TemplateType } from "@herald/proto/herald/delivery/v1/templates_service_pb";
import type { FastifyInstance } from "fastify";
import { projectOf } from "../../auth/authenticate.js";
import type { Upstreams } from "../../upstreams.js";
import { workflowUsage } from "../automation/workflow-usage.js";
import { jsonDataOf } from "../contacts/json.js";
import { EditorSourceRef, editorJsonOf, editorOf } from "../editor-source.js";
import { badQuery, iso, positiveIntegerOf } from "../shared-schemas.js";

const typeNames = ["TRANSACTIONAL", "MARKETING", "HEADLESS"] as const;
type TypeName = (typeof typeNames)[number];

const TemplateTypeSchema = Type.Union([Type.Literal("TRANSACTIONAL"), Type.Literal("MARKETING"), Type.Literal("HEADLESS")]);

export const TemplateSchema = Type.Object({
  id: Type.String(),
  projectId: Type.String(),
  name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  subject: Type.String(),
  body: Type.String(),
  from: Type.String(),
  fromName: Type.Union([Type.String(), Type.Null()]),
  replyTo: Type.Union([Type.String(), Type.Null()]),
  type: TemplateTypeSchema,
  /** Not in SPEC.md's template: the dashboard editor's source of the body, null when written as HTML. */
  editor: Type.Union([EditorSourceRef, Type.Null()]),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});

const typeToProto: Record<TypeName, TemplateType> = {
  TRANSACTIONAL: TemplateType.TRANSACTIONAL,
  MARKETING: TemplateType.MARKETING,
  HEADLESS: TemplateType.HEADLESS,
};

const typeName = (type: TemplateType): TypeName =>
  type === TemplateType.TRANSACTIONAL ? "TRANSACTIONAL" : type === TemplateType.HEADLESS ? "HEADLESS" : "MARKETING";

export const toTemplateJson = (template: Template | undefined) => {
  if (!template) throw new Error("the delivery service answered without a template");
  return {
    id: template.id,
    projectId: template.projectId,
    name: template.name,
    description: template.description || null,
    subject: template.subject,
    body: template.body,
    from: template.from,
    fromName: template.fromName || null,
    replyTo: template.replyTo || null,
    type: typeName(template.type),
    editor: editorOf(template.editorJson),
    createdAt: iso(template.createdAt) ?? "",
    updatedAt: iso(template.updatedAt) ?? "",
  };
};

/** type: one of the three names (any case); another value is a 400, as an unknown campaign status is. */
function typeFilterOf(raw: string | undefined): TemplateType {
  if (raw === undefined || raw === "") return TemplateType.UNSPECIFIED;
  const name = raw.trim().toUpperCase();
  if (!(typeNames as readonly string[]).includes(name)) throw badQuery("type", "must be TRANSACTIONAL, MARKETING or HEADLESS", raw);
  return typeToProto[name as TypeName];
}

/** Lenient, as on GET /campaigns: an unknown sort or direction falls back to the default. */
const sortOf = (raw: string | undefined) =>
  raw === "name" ? TemplateSort.NAME : raw === "updatedAt" ? TemplateSort.UPDATED_AT : TemplateSort.CREATED_AT;
const directionOf = (raw: string | undefined) => (raw?.toLowerCase() === "asc" ? TemplateSortDirection.ASC : TemplateSortDirection.DESC);

const TemplateId = Type.Object({ id: Type.String({ minLength: 1 }) });
// Lengths are the delivery service's to check (422 with its rules); these only keep absurd bodies out.
const Text = Type.String({ maxLength: 1_000_000 });
const OptionalText = Type.Optional(Type.Union([Text, Type.Null()]));
const SimpleError = Type.Object({ error: Type.String() });

/** The fields of POST and PATCH alike: every one optional here, the required ones checked by the route and the service. */
const TemplateFields = Type.Object({
  name: Type.Optional(Text),
  description: OptionalText,
  subject: Type.Optional(Text),
  body: Type.Optional(Text),
  from: OptionalText,
  fromName: OptionalText,
  replyTo: OptionalText,
  type: Type.Optional(TemplateTypeSchema),
  editor: Type.Optional(Type.Union([EditorSourceRef, Type.Null()])),
});

export function registerTemplateRoutes(app: FastifyInstance, deps: { upstreams: Upstreams }): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const { templates } = deps.upstreams;
  const config = { auth: "project" } as const;
  const tags = ["Templates"];

  api.get(
    "/templates",
    {
      config,
      schema: {
        tags,
        summary: "Templates, newest first by default (offset list)",
        querystring: Type.Object({
          page: Type.Optional(Type.String()),
          pageSize: Type.Optional(Type.String()),
          type: Type.Optional(Type.String()),
          search: Type.Optional(Type.String({ maxLength: 200 })),
          sort: Type.Optional(Type.String()),
          dir: Type.Optional(Type.String()),
        }),
        response: {
          200: Type.Object({
            data: Type.Array(TemplateSchema),
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
      const answer = await templates.listTemplates({
        projectId: projectOf(request),
        page: positiveIntegerOf("page", query.page),
        pageSize: positiveIntegerOf("pageSize", query.pageSize),
        type: typeFilterOf(query.type),
        search: query.search ?? "",
        sort: sortOf(query.sort),
        direction: directionOf(query.dir),
      });
      return {
        data: answer.templates.map(toTemplateJson),
        page: answer.page,
        pageSize: answer.pageSize,
        total: Number(answer.total),
        totalPages: answer.totalPages,
      };
    },
  );

  api.post(
    "/templates",
    {
      config,
      schema: {
        tags,
        summary: "Create a template (201); the sender's domain must be verified for the project",
        body: TemplateFields,
        response: { 201: TemplateSchema, 400: SimpleError },
      },
    },
    async (request, reply) => {
      const { name, description, subject, body, from, fromName, replyTo, type, editor } = request.body;
      // SPEC.md names this simple body for a missing template from.
      if (from === undefined || from === null || from.trim() === "") return reply.status(400).send({ error: "from is required" });
      const answer = await templates.createTemplate({
        projectId: projectOf(request),
        name,
        description: description ?? undefined,
        subject,
        body,
        from,
        fromName: fromName ?? undefined,
        replyTo: replyTo ?? undefined,
        type: type ? typeToProto[type] : TemplateType.UNSPECIFIED,
        editorJson: editorJsonOf(editor),
      });
      return reply.status(201).send(toTemplateJson(answer.template));
    },
  );

  api.post(
    "/templates/preview",
    {
      config,
      schema: {
        tags,
        summary: "Render a subject and body that need not be saved, with a contact's data or sample data; nothing is stored or sent",
        body: Type.Object(
          {
            subject: Text,
            body: Text,
            contactId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
            data: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ subject: Type.String(), html: Type.String() }) },
      },
    },
    async (request) => {
      const projectId = projectOf(request);
      const { subject, body, contactId, data } = request.body;
      // A contact's stored data first, then the sample data over it, as a send's data is.
      const contact = contactId ? (await deps.upstreams.contacts.getContact({ projectId, contactId })).contact : undefined;
      const answer = await templates.previewTemplate({
        projectId,
        subject,
        body,
        dataJson: JSON.stringify({ ...(contact?.data ?? {}), ...(data ?? {}) }),
        contactId: contact?.id ?? "",
        contactEmail: contact?.email ?? "",
      });
      return { subject: answer.subject, html: answer.body };
    },
  );

  api.get(
    "/templates/:id",
    { config, schema: { tags, summary: "One template", params: TemplateId, response: { 200: TemplateSchema } } },
    async (request) => toTemplateJson((await templates.getTemplate({ projectId: projectOf(request), id: request.params.id })).template),
  );

  api.patch(
    "/templates/:id",
    {
      config,
      schema: {
        tags,
        summary: "Change the fields sent; a new sender or Liquid is checked again. null clears description, fromName, replyTo, editor",
        params: TemplateId,
        body: TemplateFields,
        response: { 200: TemplateSchema, 400: SimpleError },
      },
    },
    async (request, reply) => {
      const { name, description, subject, body, from, fromName, replyTo, type, editor } = request.body;
      // The same simple body as on create: a template cannot lose its sender.
      if (from === null || (from !== undefined && from.trim() === "")) return reply.status(400).send({ error: "from is required" });
      const answer = await templates.updateTemplate({
        projectId: projectOf(request),
        id: request.params.id,
        name,
        // null clears: the service reads an empty string as "none".
        description: description === null ? "" : description,
        subject,
        body,
        from,
        fromName: fromName === null ? "" : fromName,
        replyTo: replyTo === null ? "" : replyTo,
        type: type ? typeToProto[type] : TemplateType.UNSPECIFIED,
        editorJson: editorJsonOf(editor),
      });
      return toTemplateJson(answer.template);
    },
  );

  api.delete(
    "/templates/:id",
    { config, schema: { tags, summary: "Delete a template", params: TemplateId, response: { 204: Type.Null() } } },
    async (request, reply) => {
      await templates.deleteTemplate({ projectId: projectOf(request), id: request.params.id });
      return reply.status(204).send(null);
    },
  );

  api.post(
    "/templates/:id/duplicate",
    {
      config,
      schema: {
        tags,
        summary: 'Copy a template as "<name> (copy)" (201): answers the new id and the copy',
        params: TemplateId,
        response: { 201: Type.Object({ id: Type.String(), template: TemplateSchema }) },
      },
    },
    async (request, reply) => {
      const answer = await templates.duplicateTemplate({ projectId: projectOf(request), id: request.params.id });
      const template = toTemplateJson(answer.template);
      return reply.status(201).send({ id: template.id, template });
    },
  );

  api.post(
    "/templates/:id/test",
    {
      config,
      schema: {
        tags,
        summary:
          "Send the template to one address, rendered with the data given, as POST /v1/send would (the address becomes a contact if new)",
        params: TemplateId,
        body: Type.Object(
          { email: Type.String({ minLength: 3, maxLength: 254 }), data: Type.Optional(Type.Record(Type.String(), Type.Unknown())) },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ success: Type.Boolean(), emailId: Type.String() }) },
      },
    },
    async (request) => {
      const answer = await deps.upstreams.emails.sendEmail({
        projectId: projectOf(request),
        to: [{ email: request.body.email }],
        templateId: request.params.id,
        data: jsonDataOf(request.body.data),
      });
      return { success: true, emailId: answer.emails[0]?.emailId ?? "" };
    },
  );

  api.get(
    "/templates/:id/usage",
    {
      config,
      schema: {
        tags,
        summary: "Campaigns and workflow steps that reference the template",
        params: TemplateId,
        response: {
          200: Type.Object({
            templateId: Type.String(),
            campaigns: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), status: Type.String() })),
            workflows: Type.Array(
              Type.Object({
                id: Type.String(),
                name: Type.String(),
                steps: Type.Array(Type.Object({ id: Type.String(), name: Type.String() })),
              }),
            ),
            total: Type.Integer(),
          }),
        },
      },
    },
    async (request) => {
      // A campaign carries its own subject and body (SPEC.md "Campaign" has no template), so only workflow steps use a template.
      const projectId = projectOf(request);
      const answer = await templates.getTemplateUsage({ projectId, id: request.params.id });
      const usage = await workflowUsage(deps.upstreams, projectId, { case: "templateId", value: answer.templateId });
      const steps = await Promise.all(
        usage.map(async (workflow) => {
          const { workflow: full } = await deps.upstreams.workflows.getWorkflow({ projectId, id: workflow.id });
          const names = new Map((full?.steps ?? []).map((step) => [step.id, step.name]));
          return {
            id: workflow.id,
            name: workflow.name,
            steps: workflow.steps.map((step) => ({ id: step.id, name: names.get(step.id) ?? "" })),
          };
        }),
      );
      return { templateId: answer.templateId, campaigns: [], workflows: steps, total: steps.length };
    },
  );
}
