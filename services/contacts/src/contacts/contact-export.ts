import type { ConditionTree } from "@herald/conditions";
import type { Db, SqlPool } from "../db/client.js";
import type { ContactRow } from "../db/contacts.js";
import { type EventRow, listEvents } from "../db/events.js";
import { listSegments } from "../db/segments.js";
import { pageLimit } from "../domain/paging.js";
import { conditionSql, loadConditionScope } from "../segments/condition-scope.js";
import type { Contacts } from "./contacts.js";

/** A segment the contact belongs to now. */
export interface SegmentMembership {
  segmentId: string;
  name: string;
  type: "DYNAMIC" | "STATIC";
  /** When it was added (STATIC) or last entered (a tracked DYNAMIC segment); null for an untracked DYNAMIC segment. */
  memberSince: Date | null;
}

/** One part of a contact's export, in the order they come: the contact, pages of its events, its memberships. */
export type ContactExportPart =
  | { case: "contact"; value: ContactRow }
  | { case: "events"; value: EventRow[] }
  | { case: "segments"; value: SegmentMembership[] };

export const exportPageLimits = { fallback: 500, max: 1_000 };

/**
 * Everything contacts holds about one contact, for a data-subject access request (GDPR Article 15): the contact (NOT_FOUND
 * before anything else when the project has none of that id), its events a page at a time, newest first, read by the
 * contact's index so that a long history never sits in memory whole, and the segments it belongs to now.
 */
export async function* exportContact(
  deps: { db: Db; pool: SqlPool; contacts: Contacts },
  projectId: string,
  contactId: string,
  pageSize: number,
): AsyncGenerator<ContactExportPart> {
  const contact = await deps.contacts.get(projectId, contactId);
  yield { case: "contact", value: contact };
  const limit = pageLimit(pageSize, exportPageLimits);
  let before: { createdAt: Date; id: string } | undefined;
  for (;;) {
    const events = await listEvents(deps.db, projectId, { filter: { name: undefined, contactId }, before, limit });
    if (events.length > 0) yield { case: "events", value: events };
    const last = events.at(-1);
    if (!last || events.length < limit) break;
    before = { createdAt: last.createdAt, id: last.id };
  }
  yield { case: "segments", value: await segmentMemberships(deps, projectId, contactId) };
}

/**
 * The segments of the project the contact belongs to now: STATIC ones that list it, and DYNAMIC ones whose condition
 * selects it, every condition read in one statement over the contact's row (a tracked segment's stored membership may
 * lag its condition by a moment; its entry time is kept where the condition still selects the contact).
 */
async function segmentMemberships(deps: { db: Db; pool: SqlPool }, projectId: string, contactId: string): Promise<SegmentMembership[]> {
  const segments = await listSegments(deps.db, projectId);
  if (segments.length === 0) return [];
  const { rows: stored } = await deps.pool.query<{ segmentId: string; since: Date }>(
    `SELECT segment_id::text AS "segmentId", created_at AS since FROM segment_members WHERE contact_id = $1::uuid AND project_id = $2::uuid`,
    [contactId, projectId],
  );
  const since = new Map(stored.map((row) => [row.segmentId, row.since]));
  const dynamic = segments.filter((segment) => segment.type === "DYNAMIC" && segment.condition !== null);
  const selected = new Set<string>();
  if (dynamic.length > 0) {
    const scope = await loadConditionScope(deps.db, projectId);
    const values: unknown[] = [projectId, contactId];
    const columns = dynamic.map((segment) => {
      const condition = conditionSql(segment.condition as unknown as ConditionTree, scope, values.length + 1);
      values.push(...condition.values);
      return `(${condition.sql}) AS "${segment.id}"`;
    });
    const { rows } = await deps.pool.query<Record<string, boolean | null>>(
      `SELECT ${columns.join(", ")} FROM contacts c WHERE c.project_id = $1::uuid AND c.id = $2::uuid`,
      values,
    );
    for (const segment of dynamic) if (rows[0]?.[segment.id] === true) selected.add(segment.id);
  }
  return segments.flatMap((segment): SegmentMembership[] => {
    const member = segment.type === "STATIC" ? since.has(segment.id) : selected.has(segment.id);
    if (!member) return [];
    const memberSince = segment.type === "STATIC" || segment.trackMembership ? (since.get(segment.id) ?? null) : null;
    return [{ segmentId: segment.id, name: segment.name, type: segment.type, memberSince }];
  });
}
