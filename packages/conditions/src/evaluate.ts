import { canonicalInstant } from "./dates.js";
import { planCondition } from "./plan.js";
import { compare, type DataTest, type EventTest, type Predicate } from "./predicate.js";
import type { ConditionSubject, ConditionTree, EvaluationContext, JsonObject, JsonValue } from "./types.js";

/**
 * Whether a contact matches a condition tree, in memory: the same answer as the
 * contacts service's SQL for the same tree, context and stored contact. Throws
 * ConditionError when the tree is not valid in the context.
 */
export function evaluateCondition(tree: ConditionTree, subject: ConditionSubject, context: EvaluationContext): boolean {
  return holds(planCondition(tree, context), subject);
}

function holds(predicate: Predicate, subject: ConditionSubject): boolean {
  const { contact } = subject;
  switch (predicate.kind) {
    case "constant":
      return predicate.value;
    case "all":
      return predicate.predicates.every((inner) => holds(inner, subject));
    case "any":
      return predicate.predicates.some((inner) => holds(inner, subject));
    case "not":
      return !holds(predicate.predicate, subject);
    case "email":
      return predicate.test === "equals" ? contact.email === predicate.value : contact.email.includes(predicate.value);
    case "subscribed":
      return contact.subscribed === predicate.value;
    case "timestamp":
      return compare(contact[predicate.column].getTime(), predicate.comparison, predicate.instant.epochMs);
    case "data":
      return dataTestHolds(predicate.test, valueAt(predicate.scope ? (subject[predicate.scope] ?? {}) : contact.data, predicate.path));
    case "events":
      return eventTestHolds(
        predicate.test,
        subject.events.filter((event) => event.name === predicate.name).map((event) => event.createdAt.getTime()),
      );
    case "staticSegment":
      return subject.segmentIds.has(predicate.id);
  }
}

const isJsonObject = (value: JsonValue | undefined): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The value at a path of nested objects (never into an array, as `->` in SQL), or undefined. */
function valueAt(data: JsonObject, path: readonly string[]): JsonValue | undefined {
  let current: JsonValue | undefined = data;
  for (const key of path) {
    if (!isJsonObject(current) || !Object.hasOwn(current, key)) return undefined;
    current = current[key];
  }
  return current;
}

function dataTestHolds(test: DataTest, value: JsonValue | undefined): boolean {
  switch (test.kind) {
    case "exists":
      return value !== undefined && value !== null;
    case "equals":
      return value === test.value;
    case "contains":
      return typeof value === "string" && value.includes(test.value);
    case "number":
      return typeof value === "number" && compare(value, test.comparison, test.value);
    case "instant": {
      const iso = typeof value === "string" ? canonicalInstant(value, test.dateTimeOnly) : undefined;
      return iso !== undefined && compare(iso, test.comparison, test.instant.iso);
    }
  }
}

function eventTestHolds(test: EventTest, times: number[]): boolean {
  switch (test.kind) {
    case "occurred": {
      const { from, to } = test;
      return times.some((time) => (from === undefined || time >= from.epochMs) && (to === undefined || time <= to.epochMs));
    }
    case "count":
      return compare(times.length, test.comparison, test.value);
  }
}
