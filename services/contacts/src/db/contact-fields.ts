import type { FieldType } from "../domain/field-type.js";
import type { Reader } from "./client.js";
import { Prisma } from "./generated/client.js";

export interface RegisteredField {
  key: string;
  type: FieldType;
}

/** Registers keys not yet known; a key already registered keeps its type (the first value seen fixed it). */
/**
 * The one order in which every statement registers keys: by project, then key, compared as plain
 * code units (never a locale, which may differ between replicas and call distinct keys equal).
 * Two statements registering the same new keys then lock them in the same order and cannot
 * deadlock on each other.
 */
export function inFieldLockOrder<Field extends { key: string; projectId?: string }>(fields: readonly Field[]): Field[] {
  const order = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return [...fields].sort((a, b) => order((a.projectId ?? "").toLowerCase(), (b.projectId ?? "").toLowerCase()) || order(a.key, b.key));
}

export async function registerFields(db: Reader, projectId: string, unordered: RegisteredField[]): Promise<void> {
  if (unordered.length === 0) return;
  const fields = inFieldLockOrder(unordered);
  await db.$executeRaw`
    INSERT INTO contact_fields (project_id, key, type)
    SELECT ${projectId}::uuid, f.key, f.type
    FROM unnest(${fields.map((field) => field.key)}::text[], ${fields.map((field) => field.type)}::text[]) AS f(key, type)
    ON CONFLICT (project_id, key) DO NOTHING`;
}

export async function listRegisteredFields(db: Reader, projectId: string): Promise<RegisteredField[]> {
  return db.$queryRaw<RegisteredField[]>`
    SELECT key, type FROM contact_fields WHERE project_id = ${projectId}::uuid ORDER BY key`;
}

export async function findRegisteredField(db: Reader, projectId: string, key: string): Promise<RegisteredField | undefined> {
  const [field] = await db.$queryRaw<RegisteredField[]>`
    SELECT key, type FROM contact_fields WHERE project_id = ${projectId}::uuid AND key = ${key}`;
  return field;
}

export async function unregisterField(db: Reader, projectId: string, key: string): Promise<void> {
  await db.$executeRaw`DELETE FROM contact_fields WHERE project_id = ${projectId}::uuid AND key = ${key}`;
}

/** How many of the project's contacts have each top-level data key, and how many contacts there are. */
export async function countKeyCoverage(db: Reader, projectId: string): Promise<{ contacts: number; withKey: Map<string, number> }> {
  const [total, keys] = await Promise.all([
    db.$queryRaw<Array<{ n: bigint }>>`SELECT count(*) AS n FROM contacts WHERE project_id = ${projectId}::uuid`,
    db.$queryRaw<Array<{ key: string; n: bigint }>>`
      SELECT k AS key, count(*) AS n FROM contacts, jsonb_object_keys(data) AS k
      WHERE project_id = ${projectId}::uuid GROUP BY k`,
  ]);
  return { contacts: Number(total[0]?.n ?? 0), withKey: new Map(keys.map((row) => [row.key, Number(row.n)])) };
}

export async function anyContactHasKey(db: Reader, projectId: string, key: string): Promise<boolean> {
  const rows = await db.$queryRaw<unknown[]>`SELECT 1 FROM contacts WHERE project_id = ${projectId}::uuid AND data ? ${key} LIMIT 1`;
  return rows.length > 0;
}

/** A field's stored values as JSON: a core column, or a data key. */
export type FieldColumn = "email" | "subscribed" | "created_at" | "updated_at" | { key: string };

const valueSql = (column: FieldColumn) =>
  typeof column === "string" ? Prisma.sql`to_jsonb(${Prisma.raw(column)})` : Prisma.sql`data -> ${column.key}`;

/**
 * Distinct values of a field in jsonb order, after the given one: a keyset page.
 * Numbers, strings and booleans of one key sort in separate runs (jsonb orders by type first).
 */
export async function listDistinctValues(
  db: Reader,
  projectId: string,
  column: FieldColumn,
  options: { after: string | undefined; limit: number },
): Promise<unknown[]> {
  const value = valueSql(column);
  const present = typeof column === "string" ? Prisma.empty : Prisma.sql`AND data ? ${column.key}`;
  const after = options.after === undefined ? Prisma.empty : Prisma.sql`AND ${value} > ${options.after}::jsonb`;
  const rows = await db.$queryRaw<Array<{ value: unknown }>>`
    SELECT DISTINCT ${value} AS value FROM contacts
    WHERE project_id = ${projectId}::uuid ${present} ${after}
    ORDER BY value LIMIT ${options.limit}`;
  return rows.map((row) => row.value);
}

/**
 * Removes a data key from up to `limit` contacts after the given position in the
 * (created_at, id) index, one short statement: a whole-project delete walks the
 * project once in such batches, so no row stays locked for long.
 */
export async function removeKeyFromBatch(
  db: Reader,
  projectId: string,
  key: string,
  options: { after: { createdAt: Date; id: string } | undefined; limit: number },
): Promise<{ updated: number; last: { createdAt: Date; id: string } | undefined }> {
  const after = options.after ? Prisma.sql`AND (created_at, id) > (${options.after.createdAt}, ${options.after.id}::uuid)` : Prisma.empty;
  const [row] = await db.$queryRaw<Array<{ updated: bigint; lastCreatedAt: Date | null; lastId: string | null }>>`
    WITH batch AS (
      SELECT id, created_at FROM contacts
      WHERE project_id = ${projectId}::uuid ${after}
      ORDER BY created_at, id LIMIT ${options.limit}
    ),
    updated AS (
      UPDATE contacts c SET data = c.data - ${key}::text
      FROM batch WHERE c.project_id = ${projectId}::uuid AND c.id = batch.id AND c.data ? ${key}
      RETURNING c.id
    ),
    last AS (SELECT created_at, id FROM batch ORDER BY created_at DESC, id DESC LIMIT 1)
    SELECT (SELECT count(*) FROM updated) AS updated, (SELECT created_at FROM last) AS "lastCreatedAt", (SELECT id::text FROM last) AS "lastId"`;
  const last = row?.lastCreatedAt && row.lastId ? { createdAt: row.lastCreatedAt, id: row.lastId } : undefined;
  return { updated: Number(row?.updated ?? 0), last };
}
