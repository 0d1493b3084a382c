import { checkTree } from "./check-tree.js";
import { checkSegmentReferences } from "./segments.js";
import type { ConditionIssue, ValidationContext, ValidationResult } from "./types.js";

/**
 * Checks a condition tree as a client sent it and returns it in normal form
 * (operator aliases resolved, values and units only where used), or every issue,
 * each at the path of the node at fault (`condition.groups[0].filters[1].operator`,
 * the root named by `context.root`). With `context.segment`, the segments it
 * references must exist and must not refer back to each other in a cycle.
 */
export function validateCondition(input: unknown, context: ValidationContext): ValidationResult {
  const root = context.root ?? "condition";
  const issues: ConditionIssue[] = [];
  const tree = checkTree(input, context, root, issues);
  if (tree && context.segment) issues.push(...checkSegmentReferences(tree, context, context.segment, root));
  return tree && issues.length === 0 ? { ok: true, tree } : { ok: false, errors: issues };
}
