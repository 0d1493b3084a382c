import { DomainError, validationFailed } from "@herald/errors";
import type { EditorSource } from "@herald/rendering";
import { liquidFailure, type RenderVariables } from "@herald/rendering";
import type { RenderPool } from "@herald/rendering/pool";
import type { Db } from "../db/client.js";
import {
  deleteTemplate,
  findTemplate,
  insertTemplate,
  listTemplates,
  type TemplateChanges,
  type TemplateQuery,
  type TemplateRow,
  updateTemplate,
} from "../db/templates.js";
import { isId, requireProjectId } from "../domain/ids.js";
import {
  type CheckedTemplateFields,
  checkTemplateFields,
  duplicateNameOf,
  type TemplateFieldsInput,
  type TemplateType,
} from "../domain/template-fields.js";
import { requireVerifiedSenderDomain } from "../sending-domains/sender-domain.js";

export type Templates = ReturnType<typeof createTemplates>;

export interface NewTemplateInput extends TemplateFieldsInput {
  type?: TemplateType;
}

export interface TemplateUpdate extends TemplateFieldsInput {
  type?: TemplateType;
}

export interface TemplatePage {
  rows: TemplateRow[];
  page: number;
  pageSize: number;
  total: number;
  totalPages: number;
}

/** SPEC.md "Limits": page size default 20; the maximum is ours (docs/api-decisions.md "Templates"). */
export const templatePageSizes = { default: 20, max: 100 } as const;

/** Pages past this are answered as this one (always empty in practice): keeps the SQL offset a 32-bit integer. */
const maxPage = 10_000_000;

/** A preview renders once, for one reader: the budget of one recipient of a send. */
const previewRenderMs = 500;

const templateNotFound = () => new DomainError("not-found", "TEMPLATE_NOT_FOUND", "Template not found");

export function createTemplates(deps: { db: Db; renders: RenderPool }) {
  const { db, renders } = deps;

  async function find(projectId: string, id: string): Promise<TemplateRow> {
    const row = isId(id) ? await findTemplate(db, requireProjectId(projectId), id) : null;
    if (!row) throw templateNotFound();
    return row;
  }

  /** Shape first (422), then Liquid (422 naming the line), then the sender's domain (403). */
  async function checked(projectId: string, input: TemplateFieldsInput): Promise<CheckedTemplateFields> {
    const { fields, violations } = checkTemplateFields(input);
    if (violations.length > 0) {
      const first = violations[0];
      throw validationFailed(first ? `Invalid ${first.field}: it ${first.message}` : "Validation failed", violations);
    }
    const problems = await renders.validate({ subject: fields.subject, body: fields.body });
    if (problems.length > 0) throw liquidFailure(problems);
    if (fields.from) await requireVerifiedSenderDomain(db, projectId, fields.from.domain);
    return fields;
  }

  return {
    async list(projectId: string, query: Partial<TemplateQuery>): Promise<TemplatePage> {
      requireProjectId(projectId);
      const page = query.page && query.page >= 1 ? Math.min(Math.floor(query.page), maxPage) : 1;
      const pageSize =
        query.pageSize && query.pageSize >= 1 ? Math.min(Math.floor(query.pageSize), templatePageSizes.max) : templatePageSizes.default;
      const search = query.search?.trim();
      const { rows, total } = await listTemplates(db, projectId, {
        page,
        pageSize,
        type: query.type,
        search: search || undefined,
        sort: query.sort ?? "createdAt",
        direction: query.direction ?? "desc",
      });
      return { rows, page, pageSize, total, totalPages: Math.ceil(total / pageSize) };
    },

    async create(projectId: string, input: NewTemplateInput): Promise<TemplateRow> {
      requireProjectId(projectId);
      if (input.from === undefined || input.from.trim() === "") {
        throw new DomainError("invalid-argument", "FROM_REQUIRED", "from is required: the sender address of the template");
      }
      const missing = (["name", "subject", "body"] as const).filter((field) => input[field] === undefined);
      if (missing.length > 0) {
        throw validationFailed(
          `${missing.join(", ")} ${missing.length === 1 ? "is" : "are"} required`,
          missing.map((field) => ({ field, message: "is required", code: "required" })),
        );
      }
      const fields = await checked(projectId, input);
      return insertTemplate(db, {
        projectId,
        name: fields.name as string,
        description: fields.description ?? null,
        subject: fields.subject as string,
        body: fields.body as string,
        fromAddress: fields.from?.address as string,
        fromName: fields.fromName ?? null,
        replyTo: fields.replyTo ?? null,
        type: input.type ?? "MARKETING",
        editor: fields.editor ?? null,
      });
    },

    async get(projectId: string, id: string): Promise<TemplateRow> {
      return find(projectId, id);
    },

    async update(projectId: string, id: string, input: TemplateUpdate): Promise<TemplateRow> {
      await find(projectId, id);
      if (input.from !== undefined && input.from.trim() === "") {
        throw new DomainError("invalid-argument", "FROM_REQUIRED", "from cannot be removed: a template needs a sender address");
      }
      const fields = await checked(projectId, input);
      const changes: TemplateChanges = {
        ...(fields.name !== undefined ? { name: fields.name } : {}),
        ...(fields.description !== undefined ? { description: fields.description } : {}),
        ...(fields.subject !== undefined ? { subject: fields.subject } : {}),
        ...(fields.body !== undefined ? { body: fields.body } : {}),
        ...(fields.from !== undefined ? { fromAddress: fields.from.address } : {}),
        ...(fields.fromName !== undefined ? { fromName: fields.fromName } : {}),
        ...(fields.replyTo !== undefined ? { replyTo: fields.replyTo } : {}),
        ...(input.type !== undefined ? { type: input.type } : {}),
        ...(fields.editor !== undefined ? { editor: fields.editor } : {}),
      };
      const row = await updateTemplate(db, projectId, id, changes);
      if (!row) throw templateNotFound();
      return row;
    },

    async delete(projectId: string, id: string): Promise<void> {
      if (!isId(id) || !(await deleteTemplate(db, requireProjectId(projectId), id))) throw templateNotFound();
    },

    /**
     * Renders an unsaved subject and body with the data given, checked as a template's are; the
     * links a send would carry are placeholders, since no email exists.
     */
    async preview(
      projectId: string,
      input: { subject: string; body: string; data: Record<string, unknown>; contact?: RenderVariables["contact"] },
    ): Promise<{ subject: string; body: string }> {
      requireProjectId(projectId);
      const { fields, violations } = checkTemplateFields({ subject: input.subject, body: input.body });
      const [first] = violations;
      if (first) throw validationFailed(`Invalid ${first.field}: it ${first.message}`, violations);
      const source = { subject: fields.subject as string, body: fields.body as string };
      const problems = await renders.validate(source);
      if (problems.length > 0) throw liquidFailure(problems);
      const outcome = await renders.render(
        source,
        [{ data: input.data, contact: input.contact, unsubscribeUrl: "#unsubscribe", subscribeUrl: "#subscribe", manageUrl: "#manage" }],
        previewRenderMs,
      );
      if ("failed" in outcome) throw liquidFailure([outcome.failed.problem]);
      const [rendered] = outcome.rendered;
      if (!rendered) throw new Error("the render threads answered no render");
      return rendered;
    },

    /** A copy with a new id and "<name> (copy)"; the sender is copied as is, verified or not since. */
    async duplicate(projectId: string, id: string): Promise<TemplateRow> {
      const { id: _id, createdAt: _createdAt, updatedAt: _updatedAt, ...source } = await find(projectId, id);
      return insertTemplate(db, {
        ...source,
        name: duplicateNameOf(source.name),
        type: source.type as TemplateType,
        editor: source.editor as EditorSource | null,
      });
    },
  };
}
