import { isIsoDate, isTimeUnit, timeUnits } from "./dates.js";
import { dataFieldType, emailActivityKinds, type FieldRef, parseField } from "./fields.js";
import {
  canonicalOperator,
  eventOperators,
  operatorAliases,
  operators,
  operatorsByType,
  segmentOperators,
  valuelessOperators,
  windowOperators,
} from "./operators.js";
import type { ConditionFilter, ConditionIssue, FieldType, Operator, ValidationContext } from "./types.js";

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (value: unknown): value is string => typeof value === "string" && uuidPattern.test(value);

/** Text PostgreSQL can hold: well-formed UTF-16 (no lone surrogate) without NUL. */
export const isStorableText = (text: string): boolean => text.isWellFormed() && !text.includes("\u0000");

export const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const list = (names: readonly string[]): string => names.join(", ");

const valueOperators: readonly Operator[] = operators.filter((operator) =>
  Object.values(operatorsByType).some((ops) => ops.includes(operator)),
);

/** Collects the issues of one filter: a filter with any issue yields no filter. */
class FilterCheck {
  constructor(
    private readonly path: string,
    private readonly issues: ConditionIssue[],
  ) {}

  fail(where: string, code: string, message: string): undefined {
    this.issues.push({ path: where ? `${this.path}.${where}` : this.path, code, message });
    return undefined;
  }

  operatorNotAllowed(operator: Operator, what: string, allowed: readonly Operator[]): undefined {
    return this.fail("operator", "operator_not_allowed", `"${operator}" is not valid for ${what}; use one of: ${list(allowed)}`);
  }
}

/**
 * A filter with its operator's alias resolved and only the value and unit it uses,
 * or undefined after pushing every issue found (`path` names the filter).
 */
export function checkFilter(
  input: unknown,
  context: ValidationContext,
  path: string,
  issues: ConditionIssue[],
): ConditionFilter | undefined {
  const check = new FilterCheck(path, issues);
  if (!isPlainObject(input)) {
    return check.fail("", "not_an_object", "A filter must be an object with field, operator and, for most operators, value");
  }
  const field = checkFieldName(input.field, check, context);
  const operator = checkOperatorName(input.operator, check);
  if (field === undefined || operator === undefined) return undefined;
  const value = input.value ?? undefined;
  switch (field.ref.kind) {
    case "standard":
      return checkValueFilter(check, field.name, field.ref.type, "", operator, value, input.unit);
    case "data":
      // Registered field types describe contact data, not an event's or an execution's.
      return checkDataFilter(
        check,
        field.name,
        field.ref.path,
        operator,
        value,
        input.unit,
        field.ref.scope ? { ...context, fieldType: () => undefined } : context,
      );
    case "event":
      return checkEventFilter(check, field.name, operator, value, input.unit);
    case "segment":
      return checkSegmentFilter(check, field.name, field.ref.id, operator, value);
  }
}

function checkFieldName(field: unknown, check: FilterCheck, context: ValidationContext): { name: string; ref: FieldRef } | undefined {
  if (field === undefined || field === null) return check.fail("field", "required", "field is required");
  if (typeof field !== "string") return check.fail("field", "invalid_type", "field must be a string");
  const ref = isStorableText(field) ? parseField(field) : undefined;
  if (ref === undefined) {
    const activity = `email.<${emailActivityKinds.join("|")}>`;
    return check.fail(
      "field",
      "unknown_field",
      `Unknown field "${field}"; use email, subscribed, createdAt, updatedAt, data.<key>, event.<name>, ${activity}, segment.<id> or segment`,
    );
  }
  if (ref.kind === "data" && ref.scope !== undefined && !context.variables) {
    return check.fail("field", "unknown_field", `"${field}" is only known to workflow CONDITION steps`);
  }
  if (ref.kind === "segment" && ref.id !== undefined && !isUuid(ref.id)) {
    return check.fail("field", "unknown_field", `"${field}" names no segment: segment.<id> needs a segment id (a UUID)`);
  }
  return { name: field, ref };
}

function checkOperatorName(operator: unknown, check: FilterCheck): Operator | undefined {
  if (operator === undefined || operator === null) return check.fail("operator", "required", "operator is required");
  if (typeof operator !== "string") return check.fail("operator", "invalid_type", "operator must be a string");
  const canonical = canonicalOperator(operator);
  if (canonical === undefined) {
    const aliases = Object.keys(operatorAliases).join(", ");
    return check.fail(
      "operator",
      "unknown_operator",
      `Unknown operator "${operator}"; use one of: ${list(operators)} (or the aliases ${aliases})`,
    );
  }
  return canonical;
}

function checkDataFilter(
  check: FilterCheck,
  name: string,
  path: readonly string[],
  operator: Operator,
  value: unknown,
  unit: unknown,
  context: ValidationContext,
): ConditionFilter | undefined {
  if (operator === "exists" || operator === "notExists") return { field: name, operator };
  const typed = dataFieldType(path, operator, value, context.fieldType);
  if (typed === undefined) {
    if (!valueOperators.includes(operator)) return check.operatorNotAllowed(operator, `${name}, a data field`, valueOperators);
    if (value === undefined) return check.fail("value", "missing_value", `"${operator}" needs a value`);
    return check.fail("value", "invalid_value", "value must be a string, a number or a boolean");
  }
  const origin = typed.inferred ? (path.length > 1 ? " (nested keys have no registered type)" : " (no type is registered for it)") : "";
  return checkValueFilter(check, name, typed.type, origin, operator, value, unit);
}

/** What a filter's value must be to compare with a field of each type. */
const valueRules: Record<FieldType, { accepts: (value: unknown) => value is string | number | boolean; expected: string }> = {
  string: {
    accepts: (value): value is string => typeof value === "string" && isStorableText(value),
    expected: "a string (without NUL characters or unpaired surrogates)",
  },
  number: { accepts: (value): value is number => typeof value === "number" && Number.isFinite(value), expected: "a number" },
  boolean: { accepts: (value) => typeof value === "boolean", expected: "true or false" },
  date: {
    accepts: (value): value is string => typeof value === "string" && isIsoDate(value),
    expected: "a date written YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS[.sss]Z (year 0100 or later)",
  },
};

/** A filter on a field holding one value of `type` (a standard field, or data). */
function checkValueFilter(
  check: FilterCheck,
  name: string,
  type: FieldType,
  origin: string,
  operator: Operator,
  value: unknown,
  unit: unknown,
): ConditionFilter | undefined {
  const allowed = operatorsByType[type];
  if (!allowed.includes(operator)) return check.operatorNotAllowed(operator, `${name}, a ${type} field${origin}`, allowed);
  if (valuelessOperators.has(operator)) return { field: name, operator };
  if (windowOperators.has(operator)) return checkWindow(check, name, operator, value, unit);
  if (value === undefined) return check.fail("value", "missing_value", `"${operator}" needs a value`);
  const rule = valueRules[type];
  if (!rule.accepts(value)) return check.fail("value", "invalid_value", `${name} is a ${type} field: value must be ${rule.expected}`);
  return { field: name, operator, value };
}

/** `value` units before now: a positive number and one of the units. */
function checkWindow(check: FilterCheck, name: string, operator: Operator, value: unknown, unit: unknown): ConditionFilter | undefined {
  const validValue = typeof value === "number" && Number.isFinite(value) && value > 0;
  const validUnit = isTimeUnit(unit);
  if (value === undefined) check.fail("value", "missing_value", `"${operator}" needs a value: how many units back`);
  else if (!validValue) check.fail("value", "invalid_value", `value of "${operator}" must be a positive number of units`);
  if (unit === undefined || unit === null) check.fail("unit", "missing_unit", `"${operator}" needs a unit: ${list(timeUnits)}`);
  else if (!validUnit) check.fail("unit", "unknown_unit", `Unknown unit ${JSON.stringify(unit)}; use one of: ${list(timeUnits)}`);
  return validValue && validUnit ? { field: name, operator, value, unit } : undefined;
}

function checkEventFilter(
  check: FilterCheck,
  name: string,
  operator: Operator,
  value: unknown,
  unit: unknown,
): ConditionFilter | undefined {
  if (!eventOperators.includes(operator)) return check.operatorNotAllowed(operator, `${name}, an event field`, eventOperators);
  if (valuelessOperators.has(operator)) return { field: name, operator };
  if (windowOperators.has(operator)) return checkWindow(check, name, operator, value, unit);
  if (value === undefined) return check.fail("value", "missing_value", `"${operator}" needs a value: a number of events`);
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    return check.fail("value", "invalid_value", `value of "${operator}" on ${name} must be a whole number of events, 0 or more`);
  }
  return { field: name, operator, value };
}

function checkSegmentFilter(
  check: FilterCheck,
  name: string,
  id: string | undefined,
  operator: Operator,
  value: unknown,
): ConditionFilter | undefined {
  if (!segmentOperators.includes(operator)) return check.operatorNotAllowed(operator, `${name}, a segment field`, segmentOperators);
  if (id !== undefined) return { field: name, operator };
  if (value === undefined) return check.fail("value", "missing_value", `field "segment" needs the segment's id as value`);
  if (!isUuid(value)) return check.fail("value", "invalid_value", "value must be a segment id (a UUID)");
  return { field: name, operator, value };
}
