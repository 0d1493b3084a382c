import { checkTree } from "./check-tree.js";
import { ConditionError } from "./condition-error.js";
import { canonicalInstant, type Instant, instantAt, instantOfCanonical, windowStart } from "./dates.js";
import { type DataScope, dataFieldType, parseField, type StandardField } from "./fields.js";
import { comparisonOf } from "./operators.js";
import { all, any, type Comparison, type DataTest, not, type Predicate } from "./predicate.js";
import { segmentIdOf } from "./references.js";
import { checkSegmentReferences } from "./segments.js";
import type { ConditionFilter, ConditionIssue, ConditionTree, EvaluationContext } from "./types.js";

/**
 * The predicate a tree stands for at `context.now`, after validating it again in
 * the context (field types may have been registered since it was stored, and the
 * segments it uses may have changed); throws ConditionError when it is not valid.
 */
export function planCondition(tree: ConditionTree, context: EvaluationContext): Predicate {
  const root = context.root ?? "condition";
  const issues: ConditionIssue[] = [];
  const checked = checkTree(tree, context, root, issues);
  if (checked) issues.push(...checkSegmentReferences(checked, context, context.segment, root));
  if (checked === undefined || issues.length > 0) throw new ConditionError(issues);
  return new Planner(context).tree(checked);
}

interface InstantComparison {
  comparison: Comparison;
  instant: Instant;
}

class Planner {
  private readonly now: Instant;
  private readonly segments = new Map<string, Predicate>();

  constructor(private readonly context: EvaluationContext) {
    this.now = instantAt(context.now.getTime());
  }

  tree(tree: ConditionTree): Predicate {
    const groups = tree.groups.map((group) => {
      const filters = group.filters.map((filter) => this.filter(filter));
      return all(group.conditions ? [...filters, this.tree(group.conditions)] : filters);
    });
    return tree.logic === "AND" ? all(groups) : any(groups);
  }

  private filter(filter: ConditionFilter): Predicate {
    const ref = parseField(filter.field);
    switch (ref?.kind) {
      case "standard":
        return this.standard(filter, ref.field);
      case "data":
        return this.data(filter, ref.path, ref.scope);
      case "event":
        return this.events(filter, ref.name);
      case "segment":
        return this.segment(filter);
      default:
        throw new Error(`unreachable: filter on ${filter.field} passed validation`);
    }
  }

  /** email, subscribed, createdAt and updatedAt: always present, so exists is true and notExists false. */
  private standard(filter: ConditionFilter, field: StandardField): Predicate {
    const { operator } = filter;
    if (operator === "exists" || operator === "notExists") return { kind: "constant", value: operator === "exists" };
    switch (field) {
      case "email":
        return this.email(filter);
      case "subscribed":
        return negatedIf(operator === "notEquals", { kind: "subscribed", value: filter.value === true });
      default:
        return this.instants(filter, false, (comparison) => ({ kind: "timestamp", column: field, ...comparison }));
    }
  }

  private email(filter: ConditionFilter): Predicate {
    const value = String(filter.value).toLowerCase();
    const negated = filter.operator === "notEquals" || filter.operator === "notContains";
    const test = filter.operator === "equals" || filter.operator === "notEquals" ? "equals" : "contains";
    return negatedIf(negated, { kind: "email", test, value });
  }

  private data(filter: ConditionFilter, path: string[], scope: DataScope | undefined): Predicate {
    const { operator, value } = filter;
    const on = (test: DataTest): Predicate => (scope ? { kind: "data", path, test, scope } : { kind: "data", path, test });
    if (operator === "exists" || operator === "notExists") return negatedIf(operator === "notExists", on({ kind: "exists" }));
    const typed = dataFieldType(path, operator, value, scope ? () => undefined : this.context.fieldType);
    if (typed?.type === "date") {
      return this.instants(filter, true, (comparison, dateTimeOnly) => on({ kind: "instant", ...comparison, dateTimeOnly }));
    }
    if (typeof value === "string" && (operator === "contains" || operator === "notContains")) {
      return negatedIf(operator === "notContains", on({ kind: "contains", value }));
    }
    if (
      (typeof value === "string" || typeof value === "number" || typeof value === "boolean") &&
      (operator === "equals" || operator === "notEquals")
    ) {
      return negatedIf(operator === "notEquals", on({ kind: "equals", value }));
    }
    const comparison = comparisonOf(operator);
    if (typed?.type !== "number" || typeof value !== "number" || comparison === undefined) {
      throw new Error(`unreachable: ${operator} on ${filter.field} passed validation`);
    }
    return on({ kind: "number", comparison, value });
  }

  /**
   * A date operator as instant comparisons, ANDed: with the filter's date for
   * equals and the comparisons; `[now − N units, now]` for within; before
   * `now − N units` for olderThan (only full date-times pass these two when `windowsNeedTime`).
   */
  private instants(
    filter: ConditionFilter,
    windowsNeedTime: boolean,
    test: (comparison: InstantComparison, dateTimeOnly: boolean) => Predicate,
  ): Predicate {
    const { operator, value } = filter;
    if (operator === "within") {
      const start = this.windowStart(filter);
      return all([
        test({ comparison: "gte", instant: start }, windowsNeedTime),
        test({ comparison: "lte", instant: this.now }, windowsNeedTime),
      ]);
    }
    if (operator === "olderThan") return test({ comparison: "lt", instant: this.windowStart(filter) }, windowsNeedTime);
    const iso = typeof value === "string" ? canonicalInstant(value, false) : undefined;
    const comparison = comparisonOf(operator);
    if (iso === undefined || comparison === undefined) throw new Error(`unreachable: ${operator} on ${filter.field} passed validation`);
    return negatedIf(operator === "notEquals", test({ comparison, instant: instantOfCanonical(iso) }, false));
  }

  private events(filter: ConditionFilter, name: string): Predicate {
    const { operator } = filter;
    const occurred = (from?: Instant, to?: Instant): Predicate => ({ kind: "events", name, test: { kind: "occurred", from, to } });
    switch (operator) {
      case "triggered":
      case "notTriggered":
        return negatedIf(operator === "notTriggered", occurred());
      case "triggeredWithin":
      case "notTriggeredWithin":
        return negatedIf(operator === "notTriggeredWithin", occurred(this.windowStart(filter), this.now));
      case "triggeredOlderThan":
        // Has happened, and not once since the window opened: the latest occurrence is older.
        return all([occurred(), not(occurred(this.windowStart(filter)))]);
      default: {
        const comparison = comparisonOf(operator);
        if (comparison === undefined || typeof filter.value !== "number") {
          throw new Error(`unreachable: ${operator} on ${filter.field} passed validation`);
        }
        return negatedIf(operator === "notEquals", { kind: "events", name, test: { kind: "count", comparison, value: filter.value } });
      }
    }
  }

  private segment(filter: ConditionFilter): Predicate {
    const id = segmentIdOf(filter);
    const definition = id === undefined ? undefined : this.context.segment(id);
    if (id === undefined || definition === undefined) throw new Error(`unreachable: segment filter on ${filter.field} passed validation`);
    let member = this.segments.get(id);
    if (member === undefined) {
      if (definition.type === "STATIC") member = { kind: "staticSegment", id };
      else {
        const condition = checkTree(definition.condition, this.context, `segment ${id}`, []);
        if (condition === undefined) throw new Error(`unreachable: segment ${id} passed validation`);
        member = this.tree(condition);
      }
      this.segments.set(id, member);
    }
    return negatedIf(filter.operator === "notMemberOfSegment", member);
  }

  private windowStart(filter: ConditionFilter): Instant {
    if (typeof filter.value !== "number" || filter.unit === undefined) {
      throw new Error(`unreachable: ${filter.operator} without amount and unit`);
    }
    return windowStart(this.context.now, filter.value, filter.unit);
  }
}

const negatedIf = (negated: boolean, predicate: Predicate): Predicate => (negated ? not(predicate) : predicate);
