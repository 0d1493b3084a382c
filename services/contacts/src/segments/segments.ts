import { randomUUID } from "node:crypto";
import { type ConditionTree, referencesOf } from "@herald/conditions";
import type { ContactUpserts } from "../contacts/contact-upserts.js";
import type { Db, SqlPool } from "../db/client.js";
import {
  clearSegmentMembers,
  deleteSegment,
  findSegment,
  insertSegment,
  listSegments,
  type SegmentRow,
  type SegmentType,
  type SegmentWrite,
  setMemberCount,
  updateSegment,
} from "../db/segments.js";
import type { JsonObject } from "../domain/contact-data.js";
import { isId, requireProjectId } from "../domain/ids.js";
import { conditionRequired, segmentName, segmentNotDynamic, segmentNotFound, segmentNotTracked } from "../domain/segment-rules.js";
import { segmentSlug } from "../domain/segment-slug.js";
import { type ConditionScope, conditionSql, loadConditionScope, validTree } from "./condition-scope.js";
import { countLive, countMembers, type SegmentContactsPage, segmentContactsPage } from "./live-members.js";
import { evaluateMembership, type MembershipChange } from "./membership.js";
import { addStaticMembers, type MembersAdded, removeStaticMembers } from "./static-members.js";

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
  ): Promise<MembersAdded>;
  removeMembers(projectId: string, id: string, emails: string[]): Promise<{ removed: number; notMembers: number }>;
  refresh(projectId: string, id: string): Promise<SegmentRow>;
  compute(projectId: string, id: string): Promise<MembershipChange>;
  validate(projectId: string, condition: JsonObject): Promise<ConditionTree>;
}

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
    const name = segmentName(segment);
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
      if (input.type === "DYNAMIC" && input.condition === undefined) throw conditionRequired();
      const id = randomUUID();
      const condition = input.type === "DYNAMIC" ? (input.condition ?? null) : null;
      const { write, tree, scope } = await writeOf(projectId, { ...input, id, condition });
      const memberCount = tree ? await countLive(pool, projectId, tree, scope) : 0;
      const segment = await insertSegment(db, projectId, { ...write, id, type: input.type, memberCount });
      if (segment.trackMembership) await evaluateMembership(db, segment);
      return (await findSegment(db, projectId, segment.id)) ?? segment;
    },

    get: existing,

    async update(projectId, id, change) {
      const before = await existing(projectId, id);
      if (change.condition !== undefined && before.type === "STATIC") throw segmentNotDynamic();
      const condition = change.condition ?? before.condition;
      const { write, tree, scope } = await writeOf(projectId, {
        id,
        type: before.type,
        name: change.name ?? before.name,
        description: change.description ?? before.description,
        condition,
        trackMembership: change.trackMembership ?? before.trackMembership,
      });
      const memberCount = change.condition !== undefined && tree ? await countLive(pool, projectId, tree, scope) : undefined;
      const after = await updateSegment(db, projectId, id, { ...write, memberCount });
      if (!after) throw segmentNotFound();
      if (after.trackMembership && (!before.trackMembership || change.condition !== undefined)) {
        // Starting to track, or a new condition: the stored membership catches up (and emits) at once.
        await evaluateMembership(db, after);
      } else if (!after.trackMembership && before.trackMembership) {
        // No longer tracked: the stored membership would go stale, and a later re-tracking would emit a burst of exits.
        await clearSegmentMembers(db, projectId, id);
      }
      return (await findSegment(db, projectId, id)) ?? after;
    },

    async delete(projectId, id) {
      requireProjectId(projectId);
      // Campaigns that use a segment will refuse its deletion here (409) once the campaigns service exists.
      if (!isId(id) || !(await deleteSegment(db, projectId, id))) throw segmentNotFound();
    },

    contacts: async (projectId, id, query) => segmentContactsPage(deps, await existing(projectId, id), query),

    addMembers: async (projectId, id, request) => addStaticMembers(deps, projectId, await existing(projectId, id), request),

    removeMembers: async (projectId, id, emails) => removeStaticMembers(db, projectId, await existing(projectId, id), emails),

    async refresh(projectId, id) {
      const segment = await existing(projectId, id);
      return (await setMemberCount(db, segment.id, await countMembers(deps, segment))) ?? segment;
    },

    async compute(projectId, id) {
      const segment = await existing(projectId, id);
      if (segment.type !== "DYNAMIC" || !segment.trackMembership) throw segmentNotTracked();
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
