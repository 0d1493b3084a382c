import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { validationFailed } from "@herald/errors";
import {
  type Template,
  TemplateSchema,
  TemplateSort,
  TemplateSortDirection,
  type TemplatesService,
  TemplateType,
} from "@herald/proto/herald/delivery/v1/templates_service_pb";
import type { TemplateRow } from "../db/templates.js";
import type { TemplateType as TemplateTypeName } from "../domain/template-fields.js";
import type { Templates } from "../templates/templates.js";

const typeToProto: Record<TemplateTypeName, TemplateType> = {
  TRANSACTIONAL: TemplateType.TRANSACTIONAL,
  MARKETING: TemplateType.MARKETING,
  HEADLESS: TemplateType.HEADLESS,
};

const typeFromProto = (type: TemplateType): TemplateTypeName | undefined =>
  type === TemplateType.TRANSACTIONAL
    ? "TRANSACTIONAL"
    : type === TemplateType.MARKETING
      ? "MARKETING"
      : type === TemplateType.HEADLESS
        ? "HEADLESS"
        : undefined;

const sortFromProto = (sort: TemplateSort) =>
  sort === TemplateSort.NAME ? ("name" as const) : sort === TemplateSort.UPDATED_AT ? ("updatedAt" as const) : ("createdAt" as const);

export const templateToProto = (row: TemplateRow): Template =>
  create(TemplateSchema, {
    id: row.id,
    projectId: row.projectId,
    name: row.name,
    description: row.description ?? "",
    subject: row.subject,
    body: row.body,
    from: row.fromAddress,
    fromName: row.fromName ?? "",
    replyTo: row.replyTo ?? "",
    type: typeToProto[row.type as TemplateTypeName] ?? TemplateType.MARKETING,
    editorJson: row.editor === null ? "" : JSON.stringify(row.editor),
    createdAt: timestampFromDate(row.createdAt),
    updatedAt: timestampFromDate(row.updatedAt),
  });

const notAnObject = () =>
  validationFailed("Invalid data: it must be a JSON object", [{ field: "data", message: "must be a JSON object", code: "invalid_type" }]);

/** The preview's data: a JSON object, or nothing. */
function dataOf(json: string): Record<string, unknown> {
  if (!json) return {};
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw notAnObject();
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw notAnObject();
  return value as Record<string, unknown>;
}

export function createTemplatesRpc(deps: { templates: Templates }): ServiceImpl<typeof TemplatesService> {
  const { templates } = deps;
  return {
    async listTemplates(request) {
      const page = await templates.list(request.projectId, {
        page: request.page,
        pageSize: request.pageSize,
        type: typeFromProto(request.type),
        search: request.search,
        sort: sortFromProto(request.sort),
        direction: request.direction === TemplateSortDirection.ASC ? "asc" : "desc",
      });
      return {
        templates: page.rows.map(templateToProto),
        page: page.page,
        pageSize: page.pageSize,
        total: BigInt(page.total),
        totalPages: page.totalPages,
      };
    },
    async createTemplate(request) {
      const row = await templates.create(request.projectId, {
        name: request.name,
        description: request.description,
        subject: request.subject,
        body: request.body,
        from: request.from,
        fromName: request.fromName,
        replyTo: request.replyTo,
        type: typeFromProto(request.type),
        editor: request.editorJson,
      });
      return { template: templateToProto(row) };
    },
    async getTemplate(request) {
      return { template: templateToProto(await templates.get(request.projectId, request.id)) };
    },
    async updateTemplate(request) {
      const row = await templates.update(request.projectId, request.id, {
        name: request.name,
        description: request.description,
        subject: request.subject,
        body: request.body,
        from: request.from,
        fromName: request.fromName,
        replyTo: request.replyTo,
        type: typeFromProto(request.type),
        editor: request.editorJson,
      });
      return { template: templateToProto(row) };
    },
    async deleteTemplate(request) {
      await templates.delete(request.projectId, request.id);
      return {};
    },
    async duplicateTemplate(request) {
      return { template: templateToProto(await templates.duplicate(request.projectId, request.id)) };
    },
    async getTemplateUsage(request) {
      const row = await templates.get(request.projectId, request.id);
      return { templateId: row.id };
    },

    async previewTemplate(request) {
      const rendered = await templates.preview(request.projectId, {
        subject: request.subject,
        body: request.body,
        data: dataOf(request.dataJson),
        contact: request.contactId ? { id: request.contactId, email: request.contactEmail } : undefined,
      });
      return { subject: rendered.subject, body: rendered.body };
    },
  };
}
