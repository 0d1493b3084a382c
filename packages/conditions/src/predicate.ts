import type { Instant } from "./dates.js";
import type { DataScope } from "./fields.js";

/**
 * The plan both back ends interpret: a validated tree with field types resolved,
 * values normalised, windows turned into instants and DYNAMIC segments inlined.
 * Every node is two-valued (true or false, never unknown), so `not` is an exact
 * complement in SQL as in memory.
 */
export type Predicate =
  | { kind: "constant"; value: boolean }
  | { kind: "all"; predicates: Predicate[] }
  | { kind: "any"; predicates: Predicate[] }
  | { kind: "not"; predicate: Predicate }
  /** The filter value lower-cased, as stored emails are. */
  | { kind: "email"; test: "equals" | "contains"; value: string }
  | { kind: "subscribed"; value: boolean }
  | { kind: "timestamp"; column: "createdAt" | "updatedAt"; comparison: Comparison; instant: Instant }
  | { kind: "data"; path: string[]; test: DataTest; scope?: DataScope }
  | { kind: "events"; name: string; test: EventTest }
  /** A row in segment_members; the id lower-case. */
  | { kind: "staticSegment"; id: string };

export type Comparison = "eq" | "lt" | "lte" | "gt" | "gte";

/** A test on the JSON value at a data path; a missing key or JSON null fails every one. */
export type DataTest =
  | { kind: "exists" }
  /** Same JSON type and equal. */
  | { kind: "equals"; value: string | number | boolean }
  | { kind: "contains"; value: string }
  /** A JSON number compared with `value`. */
  | { kind: "number"; comparison: Comparison; value: number }
  /** A JSON string that is an ISO date (a full date-time when `dateTimeOnly`) compared with `instant`. */
  | { kind: "instant"; comparison: Comparison; instant: Instant; dateTimeOnly: boolean };

/** A test on the contact's events of one name. */
export type EventTest =
  /** At least one at or after `from` and at or before `to` (either bound optional). */
  { kind: "occurred"; from?: Instant; to?: Instant } | { kind: "count"; comparison: Comparison; value: number };

export const all = (predicates: Predicate[]): Predicate =>
  predicates.length === 1 && predicates[0] ? predicates[0] : { kind: "all", predicates };

export const any = (predicates: Predicate[]): Predicate =>
  predicates.length === 1 && predicates[0] ? predicates[0] : { kind: "any", predicates };

export const not = (predicate: Predicate): Predicate => ({ kind: "not", predicate });

/** `left <comparison> right`, for numbers or for strings of one fixed-width ASCII format. */
export function compare<T extends number | string>(left: T, comparison: Comparison, right: T): boolean {
  switch (comparison) {
    case "eq":
      return left === right;
    case "lt":
      return left < right;
    case "lte":
      return left <= right;
    case "gt":
      return left > right;
    case "gte":
      return left >= right;
  }
}
