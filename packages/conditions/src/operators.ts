import type { Comparison } from "./predicate.js";
import type { FieldType, Operator, OperatorAlias } from "./types.js";

export const operators: readonly Operator[] = [
  "equals",
  "notEquals",
  "contains",
  "notContains",
  "greaterThan",
  "lessThan",
  "greaterThanOrEqual",
  "lessThanOrEqual",
  "exists",
  "notExists",
  "within",
  "olderThan",
  "triggered",
  "triggeredWithin",
  "triggeredOlderThan",
  "notTriggered",
  "notTriggeredWithin",
  "memberOfSegment",
  "notMemberOfSegment",
];

export const operatorAliases: Readonly<Record<OperatorAlias, Operator>> = {
  gt: "greaterThan",
  lt: "lessThan",
  gte: "greaterThanOrEqual",
  lte: "lessThanOrEqual",
};

/** The operator a name stands for, aliases resolved; undefined for an unknown name. */
export function canonicalOperator(name: string): Operator | undefined {
  if (Object.hasOwn(operatorAliases, name)) return operatorAliases[name as OperatorAlias];
  return operators.find((operator) => operator === name);
}

const comparisons: readonly Operator[] = ["equals", "notEquals", "greaterThan", "lessThan", "greaterThanOrEqual", "lessThanOrEqual"];

/** The operators each type of value field takes. */
export const operatorsByType: Readonly<Record<FieldType, readonly Operator[]>> = {
  string: ["equals", "notEquals", "contains", "notContains", "exists", "notExists"],
  number: [...comparisons, "exists", "notExists"],
  boolean: ["equals", "notEquals", "exists", "notExists"],
  date: [...comparisons, "within", "olderThan", "exists", "notExists"],
};

/** `event.<name>` and `email.<kind>`: occurrence tests, and comparisons of the number of occurrences. */
export const eventOperators: readonly Operator[] = [
  "triggered",
  "notTriggered",
  "triggeredWithin",
  "notTriggeredWithin",
  "triggeredOlderThan",
  ...comparisons,
];

export const segmentOperators: readonly Operator[] = ["memberOfSegment", "notMemberOfSegment"];

/** Operators whose value is an amount of `unit`s before now. */
export const windowOperators: ReadonlySet<Operator> = new Set<Operator>([
  "within",
  "olderThan",
  "triggeredWithin",
  "notTriggeredWithin",
  "triggeredOlderThan",
]);

/** Operators that take no value (`segment` with the id as value aside). */
export const valuelessOperators: ReadonlySet<Operator> = new Set<Operator>([
  "exists",
  "notExists",
  "triggered",
  "notTriggered",
  "memberOfSegment",
  "notMemberOfSegment",
]);

/** The comparison of a comparison operator; notEquals is the complement of "eq". */
export function comparisonOf(operator: Operator): Comparison | undefined {
  switch (operator) {
    case "equals":
    case "notEquals":
      return "eq";
    case "greaterThan":
      return "gt";
    case "lessThan":
      return "lt";
    case "greaterThanOrEqual":
      return "gte";
    case "lessThanOrEqual":
      return "lte";
    default:
      return undefined;
  }
}
