import {
  ConditionError,
  type ConditionIssue,
  type ConditionTree,
  type FieldType,
  type SegmentDefinition,
  validateCondition,
} from "@herald/conditions";
import { validationFailed } from "@herald/errors";
import type { Reader } from "../db/client.js";
import { type CompiledCondition, compileCondition } from "../db/condition-sql.js";
import { listRegisteredFields } from "../db/contact-fields.js";
import { listSegments, type SegmentRow } from "../db/segments.js";
import type { JsonObject } from "../domain/contact-data.js";

/**
 * What a project's conditions are read against: its field-type registry and its
 * segments (a `segment.<id>` filter reads the other segment's definition). Loaded
 * per request; both are small next to the contacts a condition scans.
 */
export interface ConditionScope {
  now: Date;
  fieldType(key: string): FieldType | undefined;
  segment(id: string): SegmentDefinition | undefined;
}

/** A segment as another condition sees it; `replacing` stands in for its stored version (a segment being written). */
export async function loadConditionScope(
  db: Reader,
  projectId: string,
  replacing?: Pick<SegmentRow, "id" | "type" | "condition">,
): Promise<ConditionScope> {
  const [fields, segments] = await Promise.all([listRegisteredFields(db, projectId), listSegments(db, projectId)]);
  const types = new Map(fields.map((field) => [field.key, field.type]));
  const definitions = new Map<string, SegmentDefinition>();
  for (const segment of replacing ? [...segments, replacing] : segments) definitions.set(segment.id, definitionOf(segment));
  return { now: new Date(), fieldType: (key) => types.get(key), segment: (id) => definitions.get(id) };
}

function definitionOf(segment: Pick<SegmentRow, "type" | "condition">): SegmentDefinition {
  return segment.type === "STATIC" || segment.condition === null
    ? { type: "STATIC" }
    : { type: "DYNAMIC", condition: segment.condition as unknown as ConditionTree };
}

/** The tree as it will be applied (aliases resolved), or VALIDATION_ERROR naming every bad node under `field`. */
export function validTree(input: JsonObject, scope: ConditionScope, field = "condition"): ConditionTree {
  const result = validateCondition(input, { ...scope, root: field });
  if (!result.ok) throw invalidCondition(result.errors);
  return result.tree;
}

/**
 * The SQL of a condition over contacts aliased c, its values numbered from
 * `firstParameter`; VALIDATION_ERROR when the tree no longer holds in the project
 * (a segment it references now makes a cycle, say).
 */
export function conditionSql(tree: ConditionTree, scope: ConditionScope, firstParameter: number): CompiledCondition {
  try {
    return compileCondition(tree, { ...scope, firstParameter });
  } catch (error) {
    if (error instanceof ConditionError) throw invalidCondition(error.issues);
    throw error;
  }
}

const invalidCondition = (issues: ConditionIssue[]) =>
  validationFailed(
    "The condition is not valid",
    issues.map((issue) => ({ field: issue.path, message: issue.message, code: issue.code })),
  );
