import type { EditorSource } from "@herald/rendering";
import type { TemplateType } from "../domain/template-fields.js";
import type { Db } from "./client.js";
import { Prisma, type Template } from "./generated/client.js";

export type TemplateRow = Template;

export interface NewTemplate {
  projectId: string;
  name: string;
  description: string | null;
  subject: string;
  body: string;
  fromAddress: string;
  fromName: string | null;
  replyTo: string | null;
  type: TemplateType;
  editor: EditorSource | null;
}

export type TemplateChanges = Partial<Omit<NewTemplate, "projectId">>;

export interface TemplateQuery {
  page: number;
  pageSize: number;
  type?: TemplateType;
  search?: string;
  sort: "createdAt" | "updatedAt" | "name";
  direction: "asc" | "desc";
}

/** LIKE treats % and _ as wildcards and \ as its escape: a search is a plain substring. */
const likeLiteral = (text: string): string => text.replace(/[\\%_]/g, (char) => `\\${char}`);

/** null is SQL NULL for Prisma's Json columns only as Prisma.DbNull. */
const editorColumn = (editor: EditorSource | null) => (editor === null ? Prisma.DbNull : (editor as Prisma.InputJsonObject));

export const insertTemplate = (db: Db, { editor, ...row }: NewTemplate): Promise<TemplateRow> =>
  db.template.create({ data: { ...row, editor: editorColumn(editor) } });

export const findTemplate = (db: Db, projectId: string, id: string): Promise<TemplateRow | null> =>
  db.template.findFirst({ where: { projectId, id } });

const columns = Prisma.sql`id::text AS id, project_id::text AS "projectId", name, description, subject, body,
  from_address AS "fromAddress", from_name AS "fromName", reply_to AS "replyTo", type, editor, created_at AS "createdAt",
  updated_at AS "updatedAt"`;

/** Sort keys as SQL; names sort case-insensitively (then by their exact text), and id breaks every tie so pages neither repeat nor skip rows. */
const orderOf = (sort: TemplateQuery["sort"], direction: TemplateQuery["direction"]) => {
  const dir = direction === "asc" ? "ASC" : "DESC";
  const key = sort === "name" ? `lower(name) ${dir}, name ${dir}` : sort === "updatedAt" ? `updated_at ${dir}` : `created_at ${dir}`;
  return Prisma.raw(`${key}, id ${dir}`);
};

/** In SQL: Prisma cannot order by lower(name), and the search's LIKE escaping is explicit here. */
export async function listTemplates(db: Db, projectId: string, query: TemplateQuery): Promise<{ rows: TemplateRow[]; total: number }> {
  const conditions = [Prisma.sql`project_id = ${projectId}::uuid`];
  if (query.type) conditions.push(Prisma.sql`type = ${query.type}`);
  if (query.search) {
    const pattern = `%${likeLiteral(query.search)}%`;
    conditions.push(Prisma.sql`(name ILIKE ${pattern} OR description ILIKE ${pattern} OR subject ILIKE ${pattern})`);
  }
  const where = Prisma.join(conditions, " AND ");
  const [rows, counted] = await db.$transaction([
    db.$queryRaw<TemplateRow[]>`SELECT ${columns} FROM templates WHERE ${where}
      ORDER BY ${orderOf(query.sort, query.direction)} LIMIT ${query.pageSize} OFFSET ${(query.page - 1) * query.pageSize}`,
    db.$queryRaw<Array<{ total: bigint }>>`SELECT count(*) AS total FROM templates WHERE ${where}`,
  ]);
  return { rows, total: Number(counted[0]?.total ?? 0) };
}

/** The changed row, or null when the project has no such template. */
export async function updateTemplate(
  db: Db,
  projectId: string,
  id: string,
  { editor, ...changes }: TemplateChanges,
): Promise<TemplateRow | null> {
  const { count } = await db.template.updateMany({
    where: { projectId, id },
    data: { ...changes, ...(editor === undefined ? {} : { editor: editorColumn(editor) }), updatedAt: new Date() },
  });
  return count === 0 ? null : findTemplate(db, projectId, id);
}

export async function deleteTemplate(db: Db, projectId: string, id: string): Promise<boolean> {
  return (await db.template.deleteMany({ where: { projectId, id } })).count > 0;
}

/** Every template of a project: in the transaction of the consumer that heard of the deletion. */
export async function deleteProjectTemplates(tx: Pick<Db, "template">, projectId: string): Promise<void> {
  await tx.template.deleteMany({ where: { projectId } });
}
