import type { ConditionTree } from "@herald/conditions";
import type { Db, SqlPool } from "../db/client.js";
import type { ContactRow } from "../db/contacts.js";
import { type ContactsPage, countContactsMatching, pageContactsMatching, pageStaticMembers } from "../db/segment-contacts.js";
import { countStaticMembers, type SegmentRow } from "../db/segments.js";
import { pageLimit } from "../domain/paging.js";
import { segmentPageLimits } from "../domain/segment-rules.js";
import { type ConditionScope, conditionSql, loadConditionScope } from "./condition-scope.js";

export interface SegmentContactsPage {
  contacts: ContactRow[];
  total: number;
  page: number;
  pageSize: number;
}

/** The contacts a DYNAMIC segment's condition selects now. */
export function countLive(pool: SqlPool, projectId: string, tree: ConditionTree, scope: ConditionScope): Promise<number> {
  return countContactsMatching(pool, projectId, (first) => conditionSql(tree, scope, first));
}

/** A segment's members now: a STATIC segment's stored rows, a DYNAMIC segment's condition run live. */
export async function countMembers(deps: { db: Db; pool: SqlPool }, segment: SegmentRow): Promise<number> {
  if (segment.type === "STATIC") return countStaticMembers(deps.db, segment.projectId, segment.id);
  const scope = await loadConditionScope(deps.db, segment.projectId);
  return countLive(deps.pool, segment.projectId, segment.condition as unknown as ConditionTree, scope);
}

/** A page of a segment's members, read live as countMembers counts them. */
export async function segmentContactsPage(
  deps: { db: Db; pool: SqlPool },
  segment: SegmentRow,
  query: { page: number; pageSize: number },
): Promise<SegmentContactsPage> {
  const pageSize = pageLimit(query.pageSize, segmentPageLimits);
  const page = Math.max(1, Math.trunc(query.page) || 1);
  const window = { limit: pageSize, offset: (page - 1) * pageSize };
  let found: ContactsPage;
  if (segment.type === "STATIC") {
    found = await pageStaticMembers(deps.pool, segment.projectId, segment.id, window);
  } else {
    const scope = await loadConditionScope(deps.db, segment.projectId);
    const tree = segment.condition as unknown as ConditionTree;
    found = await pageContactsMatching(deps.pool, segment.projectId, (first) => conditionSql(tree, scope, first), window);
  }
  // A page past the end has no rows to carry the window count.
  const total = found.total ?? (await countMembers(deps, segment));
  return { contacts: found.contacts, total, page, pageSize };
}
