import { checkFilter, isPlainObject } from "./check-filter.js";
import type { ConditionFilter, ConditionGroup, ConditionIssue, ConditionTree, ValidationContext } from "./types.js";

export const defaultMaxDepth = 5;
export const defaultMaxFilters = 100;

interface TreeCheck {
  context: ValidationContext;
  maxDepth: number;
  issues: ConditionIssue[];
  filterCount: number;
}

/**
 * The tree in normal form (aliases resolved, unused values and units dropped), or
 * undefined after pushing every issue found under `root`. Segment references are
 * only read for their syntax here (see checkSegmentReferences).
 */
export function checkTree(input: unknown, context: ValidationContext, root: string, issues: ConditionIssue[]): ConditionTree | undefined {
  const check: TreeCheck = { context, maxDepth: context.maxDepth ?? defaultMaxDepth, issues, filterCount: 0 };
  const before = issues.length;
  const tree = checkNode(input, root, 1, check);
  const maxFilters = context.maxFilters ?? defaultMaxFilters;
  if (check.filterCount > maxFilters) {
    issues.push({
      path: root,
      code: "too_many_filters",
      message: `The condition has ${check.filterCount} filters; at most ${maxFilters} are allowed`,
    });
  }
  return issues.length === before ? tree : undefined;
}

function checkNode(input: unknown, path: string, depth: number, check: TreeCheck): ConditionTree | undefined {
  const { issues } = check;
  if (!isPlainObject(input)) {
    issues.push({ path, code: "not_an_object", message: "A condition must be an object with logic and groups" });
    return undefined;
  }
  const before = issues.length;
  const { logic, groups } = input;
  if (logic !== "AND" && logic !== "OR") {
    issues.push({ path: `${path}.logic`, code: "invalid_logic", message: 'logic must be "AND" or "OR"' });
  }
  if (groups === undefined || groups === null) {
    issues.push({ path: `${path}.groups`, code: "required", message: "groups is required (an array of groups)" });
  } else if (!Array.isArray(groups)) {
    issues.push({ path: `${path}.groups`, code: "not_an_array", message: "groups must be an array of groups" });
  }
  const checked = Array.isArray(groups) ? groups.map((group, index) => checkGroup(group, `${path}.groups[${index}]`, depth, check)) : [];
  if (issues.length > before || (logic !== "AND" && logic !== "OR")) return undefined;
  return { logic, groups: checked.filter((group) => group !== undefined) };
}

function checkGroup(input: unknown, path: string, depth: number, check: TreeCheck): ConditionGroup | undefined {
  const { issues } = check;
  if (!isPlainObject(input)) {
    issues.push({ path, code: "not_an_object", message: "A group must be an object with filters and, optionally, conditions" });
    return undefined;
  }
  const filters: ConditionFilter[] = [];
  const raw = input.filters ?? [];
  if (!Array.isArray(raw)) {
    issues.push({ path: `${path}.filters`, code: "not_an_array", message: "filters must be an array of filters" });
  } else {
    check.filterCount += raw.length;
    raw.forEach((filter, index) => {
      const checked = checkFilter(filter, check.context, `${path}.filters[${index}]`, issues);
      if (checked) filters.push(checked);
    });
  }
  const nested = input.conditions ?? undefined;
  if (nested === undefined) return { filters };
  if (depth >= check.maxDepth) {
    issues.push({
      path: `${path}.conditions`,
      code: "too_deep",
      message: `Conditions nest at most ${check.maxDepth} levels deep, the outermost being the first`,
    });
    return undefined;
  }
  const conditions = checkNode(nested, `${path}.conditions`, depth + 1, check);
  return conditions ? { filters, conditions } : undefined;
}
