import { toJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { Type, type TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import { ContactSort, SortDirection } from "@herald/proto/herald/contacts/v1/contacts_service_pb";
import { ContactSource } from "@herald/proto/herald/contacts/v1/resources_pb";
import type { FastifyInstance } from "fastify";
import { projectOf } from "../../auth/authenticate.js";
import type { Upstreams } from "../../upstreams.js";
import { workflowUsage } from "../automation/workflow-usage.js";
import { limitOf } from "../shared-schemas.js";
import { ContactSchema, DataSchema, fieldTypeName, jsonDataOf, toContactJson, toUsagesJson, UsagesSchema } from "./json.js";

const ContactId = Type.Object({ id: Type.String({ minLength: 1 }) });
const Field = Type.Object({ field: Type.String({ minLength: 1, maxLength: 300 }) });
const Meta = Type.Object({ isNew: Type.Boolean(), isUpdate: Type.Boolean() });

/** Lenient query parsing: SPEC.md says unknown sort and direction values fall back to the defaults. */
const sortOf = (raw: string | undefined) => (raw === "email" ? ContactSort.EMAIL : ContactSort.CREATED_AT);
const directionOf = (raw: string | undefined) => (raw?.toLowerCase() === "asc" ? SortDirection.ASC : SortDirection.DESC);
const subscribedOf = (raw: string | undefined) => (raw === "true" ? true : raw === "false" ? false : undefined);

export function registerContactRoutes(app: FastifyInstance, deps: { upstreams: Upstreams }): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const { contacts } = deps.upstreams;
  const config = { auth: "project" } as const;
  const tags = ["Contacts"];

  api.get(
    "/contacts",
    {
      config,
      schema: {
        tags,
        summary: "Contacts, newest first by default (cursor list)",
        querystring: Type.Object({
          limit: Type.Optional(Type.String()),
          cursor: Type.Optional(Type.String({ maxLength: 1000 })),
          search: Type.Optional(Type.String({ maxLength: 254 })),
          subscribed: Type.Optional(Type.String()),
          sort: Type.Optional(Type.String()),
          dir: Type.Optional(Type.String()),
        }),
        response: {
          200: Type.Object({ data: Type.Array(ContactSchema), cursor: Type.String(), hasMore: Type.Boolean(), total: Type.Integer() }),
        },
      },
    },
    async (request) => {
      const { query } = request;
      const answer = await contacts.listContacts({
        projectId: projectOf(request),
        limit: limitOf(query.limit, 20),
        cursor: query.cursor ?? "",
        search: query.search ?? "",
        subscribed: subscribedOf(query.subscribed),
        sort: sortOf(query.sort),
        direction: directionOf(query.dir),
      });
      return { data: answer.contacts.map(toContactJson), cursor: answer.cursor, hasMore: answer.hasMore, total: Number(answer.total) };
    },
  );

  api.post(
    "/contacts",
    {
      config,
      schema: {
        tags,
        summary: "Create or update a contact by email (201 created, 200 updated)",
        body: Type.Object({
          email: Type.Optional(Type.String({ maxLength: 254 })),
          subscribed: Type.Optional(Type.Boolean()),
          data: Type.Optional(DataSchema),
        }),
        response: {
          200: Type.Object({ ...ContactSchema.properties, _meta: Meta }),
          201: Type.Object({ ...ContactSchema.properties, _meta: Meta }),
          400: Type.Object({ error: Type.String() }),
        },
      },
    },
    async (request, reply) => {
      const { email, subscribed, data } = request.body;
      // SPEC.md names this simple body for a missing email.
      if (email === undefined || email.trim() === "") return reply.status(400).send({ error: "email is required" });
      const answer = await contacts.upsertContact({
        projectId: projectOf(request),
        email,
        subscribed,
        data: jsonDataOf(data),
        source: ContactSource.API,
      });
      return reply
        .status(answer.created ? 201 : 200)
        .send({ ...toContactJson(answer.contact), _meta: { isNew: answer.created, isUpdate: !answer.created } });
    },
  );

  api.post(
    "/contacts/lookup",
    {
      config,
      schema: {
        tags,
        summary: "Which of up to 500 addresses are contacts",
        body: Type.Object({ emails: Type.Array(Type.String({ maxLength: 254 }), { minItems: 1, maxItems: 500 }) }),
        response: {
          200: Type.Object({
            found: Type.Array(Type.Object({ email: Type.String(), id: Type.String() })),
            missing: Type.Array(Type.String()),
          }),
        },
      },
    },
    async (request) => {
      const answer = await contacts.lookupContacts({ projectId: projectOf(request), emails: request.body.emails });
      return { found: answer.contacts.map(({ email, id }) => ({ email, id })), missing: answer.missing };
    },
  );

  api.get(
    "/contacts/fields",
    {
      config,
      schema: {
        tags,
        summary: "Standard and custom fields with their types and coverage",
        response: {
          200: Type.Object({
            fields: Type.Array(
              Type.Object({ field: Type.String(), type: Type.String(), isCustom: Type.Boolean(), coverage: Type.Number() }),
            ),
          }),
        },
      },
    },
    async (request) => {
      const answer = await contacts.listFields({ projectId: projectOf(request) });
      return {
        fields: answer.fields.map((field) => ({
          field: field.field,
          type: fieldTypeName(field.type),
          isCustom: field.isCustom,
          coverage: field.coverage,
        })),
      };
    },
  );

  api.get(
    "/contacts/fields/:field/values",
    {
      config,
      schema: {
        tags,
        summary: "Distinct values of a field (cursor list)",
        params: Field,
        querystring: Type.Object({ limit: Type.Optional(Type.String()), cursor: Type.Optional(Type.String({ maxLength: 1000 })) }),
        response: { 200: Type.Object({ data: Type.Array(Type.Unknown()), cursor: Type.String(), hasMore: Type.Boolean() }) },
      },
    },
    async (request) => {
      const answer = await contacts.listFieldValues({
        projectId: projectOf(request),
        field: request.params.field,
        limit: limitOf(request.query.limit, 50),
        cursor: request.query.cursor ?? "",
      });
      return { data: answer.values.map((value) => toJson(ValueSchema, value)), cursor: answer.cursor, hasMore: answer.hasMore };
    },
  );

  api.get(
    "/contacts/fields/:field/usage",
    {
      config,
      schema: {
        tags,
        summary: "Segments, campaigns and workflows that reference the field",
        params: Field,
        response: { 200: UsagesSchema },
      },
    },
    async (request) => {
      const projectId = projectOf(request);
      const key = request.params.field.replace(/^data\./, "");
      const [own, workflows, campaigns] = await Promise.all([
        contacts.getFieldUsage({ projectId, field: request.params.field }),
        workflowUsage(deps.upstreams, projectId, { case: "field", value: key }),
        deps.upstreams.campaigns.listFieldUsage({ projectId, field: request.params.field }),
      ]);
      return {
        ...toUsagesJson(own.usages),
        campaigns: campaigns.campaigns.map(({ id, name }) => ({ id, name })),
        workflows: workflows.map(({ id, name }) => ({ id, name })),
      };
    },
  );

  api.delete(
    "/contacts/fields/:field",
    {
      config,
      schema: {
        tags,
        summary: "Remove a custom field from every contact",
        params: Field,
        response: { 200: Type.Object({ field: Type.String(), contactsUpdated: Type.Integer() }) },
      },
    },
    async (request) => {
      const answer = await contacts.deleteField({ projectId: projectOf(request), field: request.params.field });
      return { field: request.params.field, contactsUpdated: Number(answer.contactsUpdated) };
    },
  );

  api.get(
    "/contacts/:id",
    { config, schema: { tags, summary: "One contact", params: ContactId, response: { 200: ContactSchema } } },
    async (request) => toContactJson((await contacts.getContact({ projectId: projectOf(request), contactId: request.params.id })).contact),
  );

  api.patch(
    "/contacts/:id",
    {
      config,
      schema: {
        tags,
        summary: "Change a contact's email, subscription or data (data is patched)",
        params: ContactId,
        body: Type.Object({
          email: Type.Optional(Type.String({ maxLength: 254 })),
          subscribed: Type.Optional(Type.Boolean()),
          data: Type.Optional(DataSchema),
        }),
        response: { 200: ContactSchema },
      },
    },
    async (request) => {
      const { email, subscribed, data } = request.body;
      const answer = await contacts.updateContact({
        projectId: projectOf(request),
        contactId: request.params.id,
        email,
        subscribed,
        data: jsonDataOf(data),
      });
      return toContactJson(answer.contact);
    },
  );

  api.delete(
    "/contacts/:id",
    { config, schema: { tags, summary: "Delete a contact permanently", params: ContactId, response: { 204: Type.Null() } } },
    async (request, reply) => {
      await contacts.deleteContact({ projectId: projectOf(request), contactId: request.params.id });
      return reply.status(204).send(null);
    },
  );
}
