import { parseField } from "./fields.js";
import type { ConditionFilter, ConditionReferences, ConditionTree } from "./types.js";

/** Calls `visit` with every filter of the tree, nested trees included, and its path under `root`. */
export function forEachFilter(tree: ConditionTree, root: string, visit: (filter: ConditionFilter, path: string) => void): void {
  tree.groups.forEach((group, groupIndex) => {
    const groupPath = `${root}.groups[${groupIndex}]`;
    group.filters.forEach((filter, index) => {
      visit(filter, `${groupPath}.filters[${index}]`);
    });
    if (group.conditions) forEachFilter(group.conditions, `${groupPath}.conditions`, visit);
  });
}

/** The id (lower-case) of the segment a `segment.<id>` or `segment` filter names; undefined for other filters. */
export function segmentIdOf(filter: ConditionFilter): string | undefined {
  const ref = parseField(filter.field);
  if (ref?.kind !== "segment") return undefined;
  const id = ref.id ?? filter.value;
  return typeof id === "string" ? id.toLowerCase() : undefined;
}

/**
 * The data keys (top-level key of each path), event names (`email.<kind>`
 * included) and segment ids a validated tree names itself, each sorted and once;
 * what the segments it names reference is not included.
 */
export function referencesOf(tree: ConditionTree): ConditionReferences {
  const fields = new Set<string>();
  const events = new Set<string>();
  const segments = new Set<string>();
  forEachFilter(tree, "", (filter) => {
    const ref = parseField(filter.field);
    if (ref?.kind === "data" && ref.scope === undefined && ref.path[0] !== undefined) fields.add(ref.path[0]);
    if (ref?.kind === "event") events.add(ref.name);
    const segment = segmentIdOf(filter);
    if (segment !== undefined) segments.add(segment);
  });
  const sorted = (names: Set<string>) => [...names].sort();
  return { fields: sorted(fields), events: sorted(events), segments: sorted(segments) };
}
