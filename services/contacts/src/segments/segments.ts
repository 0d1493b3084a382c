import { randomUUID } from "node:crypto";
import { type ConditionTree, referencesOf } from "@herald/conditions";
import { DomainError, validationFailed } from "@herald/errors";
import type { ContactUpserts } from "../contacts/contact-upserts.js";
import type { Db, SqlPool } from "../db/client.js";
import { type ContactRow, contactColumns, findContactsByEmail } from "../db/contacts.js";
import {
  addSegmentMembers,
  countStaticMembers,
  deleteSegment,
  findSegment,
  insertSegment,
  listSegments,
  removeSegmentMembers,
  type SegmentRow,
  type SegmentType,
  type SegmentWrite,
  setMemberCount,
  updateSegment,
} from "../db/segments.js";
import { type JsonObject, patchOfData } from "../domain/contact-data.js";
import { emailViolation, normalizeEmail } from "../domain/email-address.js";
import { isId, requireProjectId } from "../domain/ids.js";
import { pageLimit } from "../domain/paging.js";
import { type ConditionScope, conditionSql, loadConditionScope, validTree } from "./condition-scope.js";
import { evaluateMembership, type MembershipChange } from "./membership.js";
import { segmentSlug } from "./segment-slug.js";

export const segmentLimits = { name: 100, description: 500, membersPerCall: 500 };
export const segmentPageLimits = { fallback: 20, max: 100 };

export interface SegmentInput {
  name: string;
  description: string;
  type: SegmentType;
  /** Required for DYNAMIC, ignored for STATIC. */
  condition: JsonObject | undefined;
  trackMembership: boolean;
}

export interface SegmentChange {
  name?: string;
  description?: string;
  condition?: JsonObject;
  trackMembership?: boolean;
}

export interface SegmentContactsPage {
  contacts: ContactRow[];
  total: number;
  page: number;
  pageSize: number;
}

export interface Segments {
  list(projectId: string): Promise<SegmentRow[]>;
  create(projectId: string, input: SegmentInput): Promise<SegmentRow>;
  get(projectId: string, id: string): Promise<SegmentRow>;
  update(projectId: string, id: string, change: SegmentChange): Promise<SegmentRow>;
  delete(projectId: string, id: string): Promise<void>;
  contacts(projectId: string, id: string, query: { page: number; pageSize: number }): Promise<SegmentContactsPage>;
  addMembers(
    projectId: string,
    id: string,
    request: { emails: string[]; createMissing: boolean; subscribed: boolean | undefined },
  ): Promise<{ added: number; created: number; notFound: number; alreadyMembers: number }>;
  removeMembers(projectId: string, id: string, emails: string[]): Promise<{ removed: number; notMembers: number }>;
  refresh(projectId: string, id: string): Promise<SegmentRow>;
  compute(projectId: string, id: string): Promise<MembershipChange>;
  validate(projectId: string, condition: JsonObject): Promise<ConditionTree>;
}

export const segmentNotFound = () => new DomainError("not-found", "SEGMENT_NOT_FOUND", "Segment not found");

const staticOnly = (action: string) =>
  new DomainError("failed-precondition", "SEGMENT_NOT_STATIC", `Only the members of a STATIC segment can be ${action}`, {
    suggestion: "A DYNAMIC segment's members follow its condition; change the condition instead",
  });

/**
 * Segments of a project: dynamic ones by a condition tree (counted and listed live,
 * tracked ones also stored and diffed by evaluateMembership), static ones by a stored
 * list of members.
 */
export function createSegments(deps: { db: Db; pool: SqlPool; upserts: ContactUpserts }): Segments {
  const { db, pool } = deps;

  async function existing(projectId: string, id: string): Promise<SegmentRow> {
    requireProjectId(projectId);
    const segment = isId(id) ? await findSegment(db, projectId, id) : undefined;
    if (!segment) throw segmentNotFound();
    return segment;
  }

  /** The contacts of a dynamic segment's condition that match, as SQL over contacts c with the project at $1. */
  function liveFilter(tree: ConditionTree, scope: ConditionScope) {
    return conditionSql(tree, scope, 2);
  }

  async function countLive(projectId: string, tree: ConditionTree, scope: ConditionScope): Promise<number> {
    const condition = liveFilter(tree, scope);
    const { rows } = await pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM contacts c WHERE c.project_id = $1::uuid AND (${condition.sql})`,
      [projectId, ...condition.values],
    );
    return Number(rows[0]?.n ?? 0);
  }

  async function count(segment: SegmentRow): Promise<number> {
    if (segment.type === "STATIC") return countStaticMembers(db, segment.id);
    const scope = await loadConditionScope(db, segment.projectId);
    return countLive(segment.projectId, segment.condition as unknown as ConditionTree, scope);
  }

  /** What is written for a segment: names checked, the condition validated against the project and its references listed. */
  async function writeOf(
    projectId: string,
    segment: Pick<SegmentRow, "id" | "type"> & {
      name: string;
      description: string;
      condition: JsonObject | null;
      trackMembership: boolean;
    },
  ): Promise<{ write: SegmentWrite; tree: ConditionTree | undefined; scope: ConditionScope }> {
    const violations = [];
    const name = segment.name.trim();
    if (name.length === 0) violations.push({ field: "name", message: "Name is required", code: "required" });
    if (name.length > segmentLimits.name) {
      violations.push({ field: "name", message: `At most ${segmentLimits.name} characters`, code: "too_long" });
    }
    if (segment.description.length > segmentLimits.description) {
      violations.push({ field: "description", message: `At most ${segmentLimits.description} characters`, code: "too_long" });
    }
    if (violations.length > 0) throw validationFailed("The segment is not valid", violations);
    const scope = await loadConditionScope(db, projectId, { id: segment.id, type: segment.type, condition: segment.condition });
    const tree = segment.condition === null ? undefined : validTree(segment.condition, scope);
    // Compiling once finds what validation of a single tree cannot: a cycle through other segments.
    if (tree) conditionSql(tree, scope, 2);
    const references = tree ? referencesOf(tree) : { fields: [], events: [] };
    return {
      write: {
        name,
        description: segment.description,
        condition: (tree as unknown as JsonObject | undefined) ?? null,
        trackMembership: segment.type === "DYNAMIC" && segment.trackMembership,
        slug: segmentSlug(name, segment.id),
        referencedFields: references.fields,
        referencedEvents: references.events,
      },
      tree,
      scope,
    };
  }

  return {
    list: (projectId) => listSegments(db, requireProjectId(projectId)),

    async create(projectId, input) {
      requireProjectId(projectId);
      if (input.type === "DYNAMIC" && input.condition === undefined) {
        throw new DomainError("invalid-argument", "CONDITION_REQUIRED", "A DYNAMIC segment needs a condition");
      }
      const id = randomUUID();
      const condition = input.type === "DYNAMIC" ? (input.condition ?? null) : null;
      const { write, tree, scope } = await writeOf(projectId, { ...input, id, condition });
      const memberCount = tree ? await countLive(projectId, tree, scope) : 0;
      const segment = await insertSegment(db, projectId, { ...write, id, type: input.type, memberCount });
      if (segment.trackMembership) await evaluateMembership(db, segment);
      return (await findSegment(db, projectId, segment.id)) ?? segment;
    },

    get: existing,

    async update(projectId, id, change) {
      const before = await existing(projectId, id);
      if (change.condition !== undefined && before.type === "STATIC") {
        throw new DomainError("invalid-argument", "SEGMENT_NOT_DYNAMIC", "A STATIC segment has no condition", {
          suggestion: "Add or remove its members instead",
        });
      }
      const condition = change.condition ?? before.condition;
      const { write, tree, scope } = await writeOf(projectId, {
        id,
        type: before.type,
        name: change.name ?? before.name,
        description: change.description ?? before.description,
        condition,
        trackMembership: change.trackMembership ?? before.trackMembership,
      });
      const memberCount = change.condition !== undefined && tree ? await countLive(projectId, tree, scope) : undefined;
      const after = await updateSegment(db, projectId, id, { ...write, memberCount });
      if (!after) throw segmentNotFound();
      if (after.trackMembership && (!before.trackMembership || change.condition !== undefined)) {
        // Starting to track, or a new condition: the stored membership catches up (and emits) at once.
        await evaluateMembership(db, after);
      } else if (!after.trackMembership && before.trackMembership) {
        // No longer tracked: the stored membership would go stale, and a later re-tracking would emit a burst of exits.
        await db.$executeRaw`DELETE FROM segment_members WHERE segment_id = ${id}::uuid`;
      }
      return (await findSegment(db, projectId, id)) ?? after;
    },

    async delete(projectId, id) {
      requireProjectId(projectId);
      // Campaigns that use a segment will refuse its deletion here (409) once the campaigns service exists.
      if (!isId(id) || !(await deleteSegment(db, projectId, id))) throw segmentNotFound();
    },

    async contacts(projectId, id, query) {
      const segment = await existing(projectId, id);
      const pageSize = pageLimit(query.pageSize, segmentPageLimits);
      const page = Math.max(1, Math.trunc(query.page) || 1);
      const offset = (page - 1) * pageSize;
      const columns = contactColumns("c").text;
      let text: string;
      let values: unknown[];
      if (segment.type === "STATIC") {
        text = `SELECT ${columns}, count(*) OVER () AS total FROM segment_members m JOIN contacts c ON c.id = m.contact_id
                WHERE m.segment_id = $2::uuid AND c.project_id = $1::uuid
                ORDER BY m.created_at DESC, c.id DESC LIMIT $3 OFFSET $4`;
        values = [projectId, segment.id, pageSize, offset];
      } else {
        const scope = await loadConditionScope(db, projectId);
        const condition = conditionSql(segment.condition as unknown as ConditionTree, scope, 4);
        text = `SELECT ${columns}, count(*) OVER () AS total FROM contacts c
                WHERE c.project_id = $1::uuid AND (${condition.sql})
                ORDER BY c.created_at DESC, c.id DESC LIMIT $2 OFFSET $3`;
        values = [projectId, pageSize, offset, ...condition.values];
      }
      const { rows } = await pool.query<ContactRow & { total: string }>(text, values);
      // A page past the end has no rows to carry the window count.
      const total = rows[0] ? Number(rows[0].total) : await count(segment);
      return {
        contacts: rows.map(({ total: _, ...contact }) => contact),
        total,
        page,
        pageSize,
      };
    },

    async addMembers(projectId, id, request) {
      const segment = await existing(projectId, id);
      if (segment.type !== "STATIC") throw staticOnly("added");
      const emails = memberEmails(request.emails);
      const found = await findContactsByEmail(db, projectId, emails);
      const known = new Set(found.map((contact) => contact.email));
      const missing = emails.filter((email) => !known.has(email));
      const ids = found.map((contact) => contact.id);
      let created = 0;
      if (request.createMissing) {
        for (const email of missing) {
          const result = await deps.upserts.upsert({
            projectId,
            email,
            subscribed: request.subscribed,
            source: "api",
            patch: patchOfData(undefined),
          });
          ids.push(result.contact.id);
          if (result.created) created += 1;
        }
      }
      const added = await addSegmentMembers(db, projectId, segment.id, ids);
      await setMemberCount(db, segment.id, await countStaticMembers(db, segment.id));
      return {
        added,
        created,
        notFound: request.createMissing ? 0 : missing.length,
        alreadyMembers: ids.length - added,
      };
    },

    async removeMembers(projectId, id, rawEmails) {
      const segment = await existing(projectId, id);
      if (segment.type !== "STATIC") throw staticOnly("removed");
      const emails = memberEmails(rawEmails);
      const found = await findContactsByEmail(db, projectId, emails);
      const removed = await removeSegmentMembers(
        db,
        segment.id,
        found.map((contact) => contact.id),
      );
      await setMemberCount(db, segment.id, await countStaticMembers(db, segment.id));
      return { removed, notMembers: emails.length - removed };
    },

    async refresh(projectId, id) {
      const segment = await existing(projectId, id);
      return (await setMemberCount(db, segment.id, await count(segment))) ?? segment;
    },

    async compute(projectId, id) {
      const segment = await existing(projectId, id);
      if (segment.type !== "DYNAMIC" || !segment.trackMembership) {
        throw new DomainError(
          "failed-precondition",
          "SEGMENT_NOT_TRACKED",
          "Only a DYNAMIC segment with trackMembership computes membership",
          {
            suggestion: "Set trackMembership to true, or use POST /segments/:id/refresh to recount",
          },
        );
      }
      const { added, removed, total } = await evaluateMembership(db, segment);
      return { added, removed, total };
    },

    async validate(projectId, condition) {
      requireProjectId(projectId);
      const scope = await loadConditionScope(db, projectId);
      const tree = validTree(condition, scope);
      conditionSql(tree, scope, 2);
      return tree;
    },
  };
}

/** Distinct normalised addresses, at most 500, each a valid address (VALIDATION_ERROR naming emails[i] otherwise). */
function memberEmails(raw: string[]): string[] {
  if (raw.length === 0)
    throw validationFailed("Give at least one email", [{ field: "emails", message: "At least one email", code: "too_small" }]);
  if (raw.length > segmentLimits.membersPerCall) {
    throw validationFailed(`At most ${segmentLimits.membersPerCall} emails per call`, [
      {
        field: "emails",
        message: `At most ${segmentLimits.membersPerCall} emails per call`,
        code: "too_many",
        received: String(raw.length),
      },
    ]);
  }
  const emails = raw.map(normalizeEmail);
  const violations = emails.flatMap((email, index) => emailViolation(email, `emails[${index}]`) ?? []);
  if (violations.length > 0) throw validationFailed("Some emails are not valid", violations);
  return [...new Set(emails)];
}
