import type { ContactOrder, ContactPosition } from "../domain/contact-order.js";
import type { Reader, Tx } from "./client.js";
import { countProjectContacts } from "./contact-counts.js";
import { Prisma } from "./generated/client.js";
import { jsonObjectOf } from "./json.js";

export interface ContactRow {
  id: string;
  email: string;
  subscribed: boolean;
  snoozedUntil: Date | null;
  data: ReturnType<typeof jsonObjectOf>;
  createdAt: Date;
  updatedAt: Date;
}

/** The columns of a ContactRow, for raw statements; `table` qualifies them when a statement needs it. */
export const contactColumns = (table = "contacts") =>
  Prisma.raw(
    `${table}.id::text AS id, ${table}.email, ${table}.subscribed, ${table}.snoozed_until AS "snoozedUntil", ${table}.data, ` +
      `${table}.created_at AS "createdAt", ${table}.updated_at AS "updatedAt"`,
  );

const asContact = (row: ContactRow): ContactRow => ({ ...row, data: jsonObjectOf(row.data) });

export async function findContact(db: Reader, projectId: string, contactId: string): Promise<ContactRow | undefined> {
  const [row] = await db.$queryRaw<ContactRow[]>`
    SELECT ${contactColumns()} FROM contacts WHERE project_id = ${projectId}::uuid AND id = ${contactId}::uuid`;
  return row && asContact(row);
}

/** The contact, locked until the transaction ends, so that a read-modify-write of it cannot interleave. */
export async function lockContact(tx: Tx, projectId: string, contactId: string): Promise<ContactRow | undefined> {
  const [row] = await tx.$queryRaw<ContactRow[]>`
    SELECT ${contactColumns()} FROM contacts WHERE project_id = ${projectId}::uuid AND id = ${contactId}::uuid FOR UPDATE`;
  return row && asContact(row);
}

export async function findContactsByEmail(db: Reader, projectId: string, emails: string[]): Promise<ContactRow[]> {
  const rows = await db.$queryRaw<ContactRow[]>`
    SELECT ${contactColumns()} FROM contacts WHERE project_id = ${projectId}::uuid AND email = ANY(${emails}::text[])`;
  return rows.map(asContact);
}

export interface ContactChange {
  email?: string;
  subscribed?: boolean;
  set: Record<string, unknown>;
  remove: string[];
  now: Date;
}

/** Applies a change to a locked contact; a unique violation means the new email is taken. */
export async function updateContact(tx: Tx, projectId: string, contactId: string, change: ContactChange): Promise<ContactRow> {
  const [row] = await tx.$queryRaw<ContactRow[]>`
    UPDATE contacts SET
      email = COALESCE(${change.email ?? null}::text, email),
      subscribed = COALESCE(${change.subscribed ?? null}::boolean, subscribed),
      data = (data || ${JSON.stringify(change.set)}::jsonb) - ${change.remove}::text[],
      updated_at = ${change.now}
    WHERE project_id = ${projectId}::uuid AND id = ${contactId}::uuid
    RETURNING ${contactColumns()}`;
  if (!row) throw new Error(`contact ${contactId} vanished while locked`);
  return asContact(row);
}

/** Deletes the contact and, by cascade, its events; false when there was none. */
export async function deleteContact(db: Reader, projectId: string, contactId: string): Promise<boolean> {
  return (await db.$executeRaw`DELETE FROM contacts WHERE project_id = ${projectId}::uuid AND id = ${contactId}::uuid`) === 1;
}

export interface ContactFilter {
  /** Lower-cased substring of the email. */
  search: string;
  /** What the trigram index is asked for in the search's place (domain/search-parts.ts); undefined: the search. */
  searchParts?: string[] | undefined;
  subscribed: boolean | undefined;
}

// LIKE treats % and _ as wildcards and \ as its escape: a search for them means the characters themselves.
const likePattern = (search: string) => `%${search.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;

function filterSql(projectId: string, filter: ContactFilter): Prisma.Sql {
  const conditions = [Prisma.sql`project_id = ${projectId}::uuid`];
  if (filter.search && filter.searchParts) {
    // The parts are word characters only, no wildcard among them; strpos, which no index serves, tests the match.
    conditions.push(...filter.searchParts.map((part) => Prisma.sql`email LIKE ${`%${part}%`}`));
    conditions.push(Prisma.sql`strpos(email, ${filter.search}) > 0`);
  } else if (filter.search) {
    conditions.push(Prisma.sql`email LIKE ${likePattern(filter.search)}`);
  }
  if (filter.subscribed !== undefined) conditions.push(Prisma.sql`subscribed = ${filter.subscribed}`);
  return Prisma.join(conditions, " AND ");
}

export interface ContactPageQuery {
  filter: ContactFilter;
  order: ContactOrder;
  after: ContactPosition | undefined;
  limit: number;
}

/**
 * One page in a total order: the sort column, then the id for ties, so that a page
 * boundary is a fixed point that rows inserted meanwhile cannot shift. The ties are
 * ordered by contacts.id, the column: a bare "id" names the output's id::text, which
 * no index orders, so every contact of the page's last instant was read and sorted.
 */
export function contactPageSql(projectId: string, query: ContactPageQuery): Prisma.Sql {
  const { order, after } = query;
  const column = order.sort === "email" ? Prisma.raw("contacts.email") : Prisma.raw("contacts.created_at");
  const direction = Prisma.raw(order.direction === "asc" ? "ASC" : "DESC");
  const comparison = Prisma.raw(order.direction === "asc" ? ">" : "<");
  const value = after && (order.sort === "email" ? Prisma.sql`${after.value}::text` : Prisma.sql`${new Date(after.value)}::timestamptz`);
  const keyset = after && value ? Prisma.sql`AND (${column}, contacts.id) ${comparison} (${value}, ${after.id}::uuid)` : Prisma.empty;
  return Prisma.sql`
    SELECT ${contactColumns()} FROM contacts
    WHERE ${filterSql(projectId, query.filter)} ${keyset}
    ORDER BY ${column} ${direction}, contacts.id ${direction}
    LIMIT ${query.limit}`;
}

export async function listContacts(db: Reader, projectId: string, query: ContactPageQuery): Promise<ContactRow[]> {
  const rows = await db.$queryRaw<ContactRow[]>(contactPageSql(projectId, query));
  return rows.map(asContact);
}

/** Contacts matching the filter: without a search, from the project's count rows (db/contact-counts.ts). */
export async function countContacts(db: Reader, projectId: string, filter: ContactFilter): Promise<number> {
  if (!filter.search) return countProjectContacts(db, projectId, filter.subscribed);
  const [row] = await db.$queryRaw<Array<{ n: bigint }>>`SELECT count(*) AS n FROM contacts WHERE ${filterSql(projectId, filter)}`;
  return Number(row?.n ?? 0);
}
