import {
  type Comparison,
  type ConditionTree,
  type DataTest,
  type EvaluationContext,
  type EventTest,
  type Predicate,
  planCondition,
} from "@herald/conditions";

export interface CompileContext extends EvaluationContext {
  /** The number of the first placeholder the SQL uses; default 1. */
  firstParameter?: number;
}

/** A parameterised SQL boolean expression over contacts aliased `c`. */
export interface CompiledCondition {
  sql: string;
  values: string[];
}

// Condition trees (@herald/conditions) as SQL over this service's tables. Every value,
// data key, event name and segment id is a text parameter with an explicit cast
// ($3::text, $4::jsonb, $5::timestamptz); the SQL text holds none. Dates in data are
// read by herald_condition_instant (condition-sql-functions.ts), which casts nothing, so
// no stored string can make a query fail (PostgreSQL does not promise the order of AND).
//
// Indexes the SQL can use (condition-sql-agreement.test.ts checks each plan):
// - data.<path> equals a string, number or boolean: the GIN (data jsonb_path_ops) index,
//   through `c.data @> $n::jsonb` ANDed with the exact test;
// - email equals: the unique (project_id, email);
// - createdAt comparisons and windows: (project_id, created_at, id); updatedAt would need
//   (project_id, updated_at);
// - event fields: events (contact_id, created_at, id), correlated on e.contact_id = c.id
//   with a range on created_at, or (project_id, name, created_at, id) when the planner
//   decorrelates; (contact_id, name, created_at) would serve them best;
// - STATIC segments: the primary key segment_members (project_id, segment_id, contact_id).
// Other data tests (contains, number and date comparisons, exists) read each contact of
// the project; a date test costs a regular-expression match per contact (about 2 µs).

const operatorOf: Record<Comparison, string> = { eq: "=", lt: "<", lte: "<=", gt: ">", gte: ">=" };
const jsonPathOperatorOf: Record<Comparison, string> = { eq: "==", lt: "<", lte: "<=", gt: ">", gte: ">=" };

const columnOf = { createdAt: "c.created_at", updatedAt: "c.updated_at" } as const;

/**
 * A condition tree as a parameterised SQL boolean expression over this service's
 * tables (contacts aliased `c`; events; segment_members) that is true exactly for
 * the contacts evaluateCondition of @herald/conditions accepts: both interpret its
 * planCondition. Every value, key and name is a parameter, numbered from
 * `context.firstParameter` (default 1); the caller adds `c.project_id = $1` itself.
 * The SQL calls the functions of conditionSqlFunctions. Throws ConditionError when
 * the tree is not valid in the context.
 */
export function compileCondition(tree: ConditionTree, context: CompileContext): CompiledCondition {
  const first = context.firstParameter ?? 1;
  if (!Number.isSafeInteger(first) || first < 1) throw new RangeError(`firstParameter must be a whole number from 1, not ${first}`);
  const values: string[] = [];
  const parameter = (value: string, type: string): string => {
    values.push(value);
    return `$${first + values.length - 1}::${type}`;
  };
  return { sql: sqlOf(planCondition(tree, context), parameter), values };
}

type Parameter = (value: string, type: string) => string;

function sqlOf(predicate: Predicate, parameter: Parameter): string {
  switch (predicate.kind) {
    case "constant":
      return predicate.value ? "TRUE" : "FALSE";
    case "all":
      return predicate.predicates.length === 0 ? "TRUE" : `(${predicate.predicates.map((inner) => sqlOf(inner, parameter)).join(" AND ")})`;
    case "any":
      return predicate.predicates.length === 0 ? "FALSE" : `(${predicate.predicates.map((inner) => sqlOf(inner, parameter)).join(" OR ")})`;
    case "not":
      return `NOT (${sqlOf(predicate.predicate, parameter)})`;
    case "email":
      return predicate.test === "equals"
        ? `c.email = ${parameter(predicate.value, "text")}`
        : `strpos(c.email, ${parameter(predicate.value, "text")}) > 0`;
    case "subscribed":
      return `c.subscribed = ${parameter(String(predicate.value), "boolean")}`;
    case "timestamp":
      return `${columnOf[predicate.column]} ${operatorOf[predicate.comparison]} ${parameter(predicate.instant.iso, "timestamptz")}`;
    case "data":
      return dataSql(predicate.path, predicate.test, parameter);
    case "events":
      return eventSql(predicate.name, predicate.test, parameter);
    case "staticSegment":
      return `EXISTS (SELECT 1 FROM segment_members m WHERE m.project_id = c.project_id AND m.segment_id = ${parameter(predicate.id, "uuid")} AND m.contact_id = c.id)`;
  }
}

/**
 * A test on the value at a data path. `->` with a text key reads object members
 * only (NULL on arrays and scalars), and each test is wrapped so that a missing
 * key (NULL) gives false, never unknown: NOT of it is then the exact complement.
 */
function dataSql(path: readonly string[], test: DataTest, parameter: Parameter): string {
  if (test.kind === "equals") {
    // Containment of {"k1":{"k2":value}} is the equality of a scalar at that path of objects (an array there contains
    // nothing but at the top level), so one test serves as both, and a GIN (jsonb_path_ops) index on data can serve it.
    // An equality beside it cost 170 ms a refresh over 5 million contacts.
    const contained = path.reduceRight((inner, key) => `{${JSON.stringify(key)}:${inner}}`, JSON.stringify(test.value));
    return `c.data @> ${parameter(contained, "jsonb")}`;
  }
  if (test.kind === "number") {
    // One jsonpath evaluation reads the value once, where `jsonb_typeof(v) = 'number' AND v > x` extracted it twice
    // (130 ms of a refresh over 5 million contacts). In strict mode a missing key, an array or any value but a number
    // makes the comparison unknown, which the silent call answers as NULL (so false); null compares false with each
    // of these operators (only != would be true, and it is not one of them).
    const keys = path.map((key) => `.${JSON.stringify(key)}`).join("");
    const jsonPath = `strict $${keys} ${jsonPathOperatorOf[test.comparison]} $value`;
    const variables = JSON.stringify({ value: test.value });
    return `coalesce(jsonb_path_match(c.data, ${parameter(jsonPath, "jsonpath")}, ${parameter(variables, "jsonb")}, true), false)`;
  }
  const value = path.reduce((json, key) => `(${json} -> ${parameter(key, "text")})`, "c.data");
  switch (test.kind) {
    case "exists":
      return `coalesce(jsonb_typeof(${value}) <> 'null', false)`;
    case "contains":
      return `coalesce(jsonb_typeof(${value}) = 'string' AND strpos(${value} #>> '{}', ${parameter(test.value, "text")}) > 0, false)`;
    case "instant": {
      const instant = `herald_condition_instant(${value}, ${test.dateTimeOnly ? "true" : "false"})`;
      return `coalesce(${instant} COLLATE "C" ${operatorOf[test.comparison]} ${parameter(test.instant.iso, "text")}, false)`;
    }
  }
}

/**
 * Events of one name of the contact: correlated, through the events index on
 * (contact_id, created_at, id); decorrelated into a join, the project test (always
 * true: a contact's events are its project's) lets the planner read only the project's
 * events of that name in their window, through (project_id, name, created_at, id).
 */
function eventSql(name: string, test: EventTest, parameter: Parameter): string {
  const ofContact = `FROM events e WHERE e.contact_id = c.id AND e.project_id = c.project_id AND e.name = ${parameter(name, "text")}`;
  switch (test.kind) {
    case "occurred": {
      const from = test.from ? ` AND e.created_at >= ${parameter(test.from.iso, "timestamptz")}` : "";
      const to = test.to ? ` AND e.created_at <= ${parameter(test.to.iso, "timestamptz")}` : "";
      return `EXISTS (SELECT 1 ${ofContact}${from}${to})`;
    }
    case "count":
      return `(SELECT count(*) ${ofContact}) ${operatorOf[test.comparison]} ${parameter(String(test.value), "bigint")}`;
  }
}
