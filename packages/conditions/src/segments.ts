import { checkTree } from "./check-tree.js";
import { forEachFilter, segmentIdOf } from "./references.js";
import type { ConditionIssue, ConditionTree, SegmentDefinition, ValidationContext } from "./types.js";

/** Filters of a tree once every DYNAMIC segment it uses is inlined, however deep. */
export const maxInlinedFilters = 1000;

/**
 * The issues of the segments a checked tree uses: unknown ids, cycles through
 * DYNAMIC segments, DYNAMIC conditions that are not valid (any more) and trees
 * that inline into more than maxInlinedFilters filters. Each issue is reported at
 * the filter of this tree that leads to it.
 */
export function checkSegmentReferences(
  tree: ConditionTree,
  context: ValidationContext,
  segment: (id: string) => SegmentDefinition | undefined,
  root: string,
): ConditionIssue[] {
  const issues: ConditionIssue[] = [];
  // Inlined sizes of the segments found sound, so a segment used many times is read once.
  const sizes = new Map<string, number>();

  function inlinedSize(current: ConditionTree, currentRoot: string, chain: readonly string[], reportAt: string | undefined): number {
    let size = 0;
    forEachFilter(current, currentRoot, (filter, path) => {
      size += 1;
      const id = segmentIdOf(filter);
      if (id === undefined) return;
      const where = reportAt ?? `${path}.${filter.field === "segment" ? "value" : "field"}`;
      const definition = segment(id);
      if (definition === undefined) {
        issues.push({ path: where, code: "unknown_segment", message: `No segment has the id ${id}` });
      } else if (definition.type === "DYNAMIC") {
        size += sizes.get(id) ?? inlineSize(id, definition.condition, chain, where);
      }
    });
    return size;
  }

  function inlineSize(id: string, condition: unknown, chain: readonly string[], where: string): number {
    if (chain.includes(id)) {
      issues.push({
        path: where,
        code: "segment_cycle",
        message: `Segments refer to each other in a cycle: ${[...chain, id].join(" → ")}`,
      });
      return 0;
    }
    const inner: ConditionIssue[] = [];
    const checked = checkTree(condition, context, `segment ${id}`, inner);
    if (checked === undefined) {
      const first = inner[0];
      const detail = first ? ` (${first.path}: ${first.message})` : "";
      issues.push({ path: where, code: "invalid_segment", message: `Segment ${id} has a condition that is not valid${detail}` });
      return 0;
    }
    const before = issues.length;
    const size = inlinedSize(checked, `segment ${id}`, [...chain, id], where);
    if (issues.length === before) sizes.set(id, size);
    return size;
  }

  const total = inlinedSize(tree, root, [], undefined);
  if (issues.length === 0 && total > maxInlinedFilters) {
    issues.push({
      path: root,
      code: "too_many_filters",
      message: `With the segments it uses inlined, the condition has ${total} filters; at most ${maxInlinedFilters} are allowed`,
    });
  }
  return issues;
}
