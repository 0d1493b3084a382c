import {
  type ConditionSubject,
  type ConditionTree,
  emailActivityEvents,
  emailActivityKinds,
  eventOperators,
  type FieldType,
  type JsonObject,
  type JsonValue,
  type Operator,
  operatorsByType,
  type SegmentDefinition,
  type TimeUnit,
  timeUnits,
} from "@herald/conditions";
import fc from "fast-check";

/**
 * Random projects for the agreement test of compiled conditions
 * (db/condition-sql-agreement.test.ts): contacts with data of every shape (values
 * of the wrong type, nulls, arrays, nested objects, keys with spaces or dots), events at ages around the window edges, STATIC and DYNAMIC segments,
 * and a condition tree over all of it, with now and then a filter that is not
 * valid. Values are drawn from small pools so that filters and data meet.
 */

export type GeneratedContact = ConditionSubject["contact"] & { events: Array<{ name: string; createdAt: Date }> };

export interface GeneratedProject {
  now: Date;
  registry: Map<string, FieldType>;
  segments: Map<string, SegmentDefinition>;
  /** Static segment id → ids of its member contacts. */
  members: Map<string, string[]>;
  contacts: GeneratedContact[];
  /** As a client would send it: aliases, stray units, and sometimes a bad filter. */
  tree: unknown;
}

const unitMs: Record<TimeUnit, number> = { minutes: 60_000, hours: 3_600_000, days: 86_400_000, weeks: 604_800_000 };
/** Few amounts, so that instants generated at a window's edge meet filters with that window; 1e7 weeks reaches past year 0100. */
const windowAmounts = [1, 7, 1.5, 1e7];
const fieldTypes: readonly FieldType[] = ["string", "number", "boolean", "date"];

/** Top-level data keys, some registered: with a space, a dot (never addressable), SQL quotes, and `__proto__` and `constructor` against prototype lookups. */
const topLevelKeys = ["age", "plan", "first name", "signup", "vip", "address", "a", "a.b", "x'y\"{z},", "__proto__", "constructor"];
const nestedKeys = ["city", "since", "b", "zip"];
const dataPaths = [
  ...topLevelKeys.filter((key) => !key.includes(".")).map((key) => [key]),
  ["address", "city"],
  ["address", "since"],
  ["a", "b"],
  ["a", "b", "zip"],
  ["missing"],
];

const texts = [
  "Paris",
  "paris",
  "PARIS",
  "ar",
  "",
  " ",
  "ß",
  "straße",
  "😀",
  "a😀b",
  "%",
  "_",
  "a%",
  "\\",
  "'",
  '"',
  "5",
  "true",
  "null",
  "é",
  "e\u0301",
];
const numbers = [0, 1, -1, 5, 5.5, 0.1, 0.30000000000000004, 1e21, -1e-7, 2 ** 53, 1.7976931348623157e308, 5e-324];
/** Strings that look like dates and are not, or are only just. */
const dateLookalikes = [
  "2024-02-30T00:00:00Z",
  "9999-99-99",
  "2023-02-29",
  "2024-02-29",
  "2100-02-29",
  "2000-02-29T12:00:00Z",
  "0050-01-01",
  "0099-12-31T23:59:59Z",
  "0100-01-01",
  "9999-12-31T23:59:59.999Z",
  "2024-01-01T24:00:00Z",
  "2024-01-01T23:60:00Z",
  "2024-01-01T10:00:00.12Z",
  "2024-01-01T10:00:00+00:00",
  "2024-01-01 10:00:00",
  "2024-01-01T10:00:00z",
  "2024-01-01\n",
  "20240101",
  "٢٠٢٤-٠١-٠١",
];
const customEvents = ["signup", "order.completed", "Signup"];
const activityKinds = emailActivityKinds.slice(0, 3);
/** Stored event names: custom ones and the events email activity is recorded as. */
const eventNames = [...customEvents, ...activityKinds.map((kind) => emailActivityEvents[kind])];
/** The fields that filter on them: `event.<name>`, and the `email.<kind>` shorthand. */
const eventFields = [...customEvents.map((name) => `event.${name}`), ...activityKinds.map((kind) => `email.${kind}`)];
const emails = [
  "ann@example.com",
  "bob@example.com",
  "ann@test.org",
  "zoë@example.com",
  "a_b%c@example.com",
  "i̇@example.com",
  "carl@example.org",
  "dee@mail.example.com",
];
const emailValues = [...emails, "ANN@Example.com", "example", "ANN", "ë", "Ë", "_", "%", "@", "İ", "zoë"];

/** Segment ids: 0 and 1 STATIC, 2–4 DYNAMIC (each using only lower ones, so no cycle), 5 unknown. */
export const segmentIds = Array.from({ length: 6 }, (_, index) => `00000000-0000-4000-8000-00000000000${index}`);
const staticSegmentIds = segmentIds.slice(0, 2);
const unknownSegmentId = segmentIds[5] ?? "";

/** An instant near now: at, just inside or just outside a window's edge, or anywhere in a few years. */
function instantNear(now: number): fc.Arbitrary<number> {
  return fc.oneof(
    fc
      .tuple(fc.constantFrom(...windowAmounts.slice(0, -1)), fc.constantFrom(...timeUnits), fc.constantFrom(0, 0, 0, -1, 1, -1000, 1000))
      .map(([amount, unit, nudge]) => Math.floor(now - amount * unitMs[unit]) + nudge),
    fc.constantFrom(now, now + 1, now - 1),
    fc.integer({ min: -3 * 365 * 86_400_000, max: 365 * 86_400_000 }).map((offset) => now + offset),
  );
}

/** An ISO date text of an instant near now: with milliseconds, to the second, or its day. */
function isoNear(now: number): fc.Arbitrary<string> {
  return fc.tuple(instantNear(now), fc.constantFrom("ms", "s", "day")).map(([at, form]) => {
    const iso = new Date(at).toISOString();
    return form === "ms" ? iso : form === "s" ? `${iso.slice(0, 19)}Z` : iso.slice(0, 10);
  });
}

const text = fc.oneof(
  { arbitrary: fc.constantFrom(...texts), weight: 4 },
  fc.string({ unit: "grapheme", maxLength: 4 }).filter((value) => !value.includes("\u0000")),
);
const number = fc.oneof(fc.constantFrom(...numbers), fc.integer({ min: -3, max: 7 }), fc.double({ noNaN: true, noDefaultInfinity: true }));

function storedValue(now: number): fc.Arbitrary<JsonValue> {
  const scalar = fc.oneof(
    { arbitrary: text, weight: 3 },
    { arbitrary: isoNear(now), weight: 3 },
    { arbitrary: fc.constantFrom(...dateLookalikes), weight: 1 },
    { arbitrary: number, weight: 3 },
    { arbitrary: fc.boolean(), weight: 1 },
    { arbitrary: fc.constant(null), weight: 1 },
  );
  const { value } = fc.letrec<{ value: JsonValue }>((tie) => ({
    value: fc.oneof(
      { maxDepth: 3, depthIdentifier: "data" },
      { arbitrary: scalar, weight: 6 },
      { arbitrary: fc.array(tie("value"), { maxLength: 2 }), weight: 1 },
      { arbitrary: objectOf(fc.constantFrom(...nestedKeys), tie("value")), weight: 2 },
    ),
  }));
  return value;
}

/** An object with own properties only (`__proto__` included), as JSON.parse builds it. */
function objectOf(key: fc.Arbitrary<string>, value: fc.Arbitrary<JsonValue>, maxLength = 4): fc.Arbitrary<JsonObject> {
  return fc.uniqueArray(fc.tuple(key, value), { maxLength, selector: ([name]) => name }).map((entries) => Object.fromEntries(entries));
}

function contacts(now: number): fc.Arbitrary<GeneratedContact[]> {
  const contact = fc.record({
    email: fc.constantFrom(...emails),
    subscribed: fc.boolean(),
    createdAt: instantNear(now),
    updatedAt: instantNear(now),
    data: objectOf(fc.constantFrom(...topLevelKeys), storedValue(now), topLevelKeys.length),
    events: fc.array(fc.record({ name: fc.constantFrom(...eventNames), at: instantNear(now) }), { maxLength: 4 }),
  });
  return fc.uniqueArray(contact, { minLength: 2, maxLength: 8, selector: (generated) => generated.email }).map((generated) =>
    generated.map((candidate, index) => ({
      id: `10000000-0000-4000-8000-${String(index).padStart(12, "0")}`,
      email: candidate.email,
      subscribed: candidate.subscribed,
      createdAt: new Date(candidate.createdAt),
      updatedAt: new Date(candidate.updatedAt),
      data: candidate.data,
      events: candidate.events.map((event) => ({ name: event.name, createdAt: new Date(event.at) })),
    })),
  );
}

interface TreeOptions {
  now: number;
  registry: Map<string, FieldType>;
  /** Segments a filter may name. */
  segments: readonly string[];
  /** Whether some filters may be invalid. */
  faulty: boolean;
}

const aliasOf: Partial<Record<Operator, string>> = {
  greaterThan: "gt",
  lessThan: "lt",
  greaterThanOrEqual: "gte",
  lessThanOrEqual: "lte",
};

/** The operator's name, or its alias half of the time. */
const spelled = (operator: Operator): fc.Arbitrary<string> => {
  const alias = aliasOf[operator];
  return alias ? fc.constantFrom(operator, alias) : fc.constant(operator);
};

const window = fc.record({
  value: fc.oneof({ arbitrary: fc.constantFrom(...windowAmounts), weight: 4 }, fc.double({ min: 0.001, max: 100, noNaN: true })),
  unit: fc.constantFrom(...timeUnits),
});

/** value and unit for an operator on a field of `type`. */
function operands(type: FieldType, operator: Operator, options: TreeOptions): fc.Arbitrary<Record<string, unknown>> {
  if (operator === "exists" || operator === "notExists") return fc.constant({});
  if (operator === "within" || operator === "olderThan") return window;
  switch (type) {
    case "string":
      return fc.record({ value: fc.oneof(text, fc.constantFrom(...dateLookalikes)) });
    case "number":
      return fc.record({ value: number });
    case "boolean":
      return fc.record({ value: fc.boolean() });
    case "date":
      return fc.record({ value: fc.oneof(isoNear(options.now), fc.constantFrom("2024-02-29", "0100-01-01", "9999-12-31T23:59:59.999Z")) });
  }
}

function valueFilter(field: string, type: FieldType, options: TreeOptions): fc.Arbitrary<Record<string, unknown>> {
  return fc
    .constantFrom(...operatorsByType[type])
    .chain((operator) => fc.tuple(spelled(operator), operands(type, operator, options)))
    .map(([operator, rest]) => ({ field, operator, ...rest }));
}

function dataFilter(options: TreeOptions): fc.Arbitrary<Record<string, unknown>> {
  return fc.tuple(fc.constantFrom(...dataPaths), fc.constantFrom(...fieldTypes)).chain(([path, guess]) => {
    const [key] = path;
    const registered = path.length === 1 && key !== undefined ? options.registry.get(key) : undefined;
    return valueFilter(`data.${path.join(".")}`, registered ?? guess, options);
  });
}

function standardFilter(options: TreeOptions): fc.Arbitrary<Record<string, unknown>> {
  return fc.oneof(
    fc
      .tuple(fc.constantFrom(...operatorsByType.string), fc.constantFrom(...emailValues))
      .map(([operator, value]) => ({ field: "email", operator, value })),
    valueFilter("subscribed", "boolean", options),
    valueFilter("createdAt", "date", options),
    valueFilter("updatedAt", "date", options),
  );
}

function eventFilter(): fc.Arbitrary<Record<string, unknown>> {
  const field = fc.constantFrom(...eventFields);
  return fc.tuple(field, fc.constantFrom(...eventOperators)).chain(([name, operator]): fc.Arbitrary<Record<string, unknown>> => {
    if (operator === "triggered" || operator === "notTriggered") return fc.constant({ field: name, operator });
    if (operator.includes("Within") || operator === "triggeredOlderThan") return window.map((rest) => ({ field: name, operator, ...rest }));
    return fc
      .tuple(spelled(operator), fc.integer({ min: 0, max: 3 }))
      .map(([spelling, value]) => ({ field: name, operator: spelling, value }));
  });
}

function segmentFilter(options: TreeOptions): fc.Arbitrary<Record<string, unknown>> {
  const ids = options.faulty ? [...options.segments, unknownSegmentId] : options.segments;
  if (ids.length === 0) return fc.constant({ field: "subscribed", operator: "exists" });
  return fc
    .tuple(fc.constantFrom(...ids), fc.constantFrom("memberOfSegment", "notMemberOfSegment"), fc.boolean(), fc.boolean())
    .map(([id, operator, asValue, upper]) => {
      const written = upper ? id.toUpperCase() : id;
      return asValue ? { field: "segment", operator, value: written } : { field: `segment.${written}`, operator };
    });
}

/** Anything from the pools, types unchecked: mostly invalid. */
const looseFilter = fc.record(
  {
    field: fc.constantFrom(
      "email",
      "subscribed",
      "createdAt",
      "data.age",
      "data.",
      "event.",
      "email.read",
      "segment.x",
      "name",
      "data.a\u0000",
    ),
    operator: fc.constantFrom("equals", "gt", "contains", "within", "triggered", "between", "memberOfSegment"),
    value: fc.oneof(text, number, fc.boolean(), fc.constant(null), fc.constant([1]), fc.constant("a\u0000"), fc.constant("\ud800")),
    unit: fc.constantFrom("days", "years", 3),
  },
  { requiredKeys: ["field", "operator"] },
);

function filter(options: TreeOptions): fc.Arbitrary<unknown> {
  return fc.oneof(
    { arbitrary: dataFilter(options), weight: 8 },
    { arbitrary: standardFilter(options), weight: 3 },
    { arbitrary: eventFilter(), weight: 3 },
    { arbitrary: segmentFilter(options), weight: 2 },
    { arbitrary: looseFilter, weight: options.faulty ? 1 : 0 },
  );
}

export function conditionTree(options: TreeOptions, depth = 1): fc.Arbitrary<unknown> {
  const nested = depth < 3 ? fc.option(conditionTree(options, depth + 1), { freq: 3, nil: undefined }) : fc.constant(undefined);
  const group = fc
    .record({ filters: fc.array(filter(options), { maxLength: 4 }), conditions: nested })
    .map(({ filters, conditions }) => (conditions === undefined ? { filters } : { filters, conditions }));
  // Empty group lists still occur, in nested trees.
  return fc.record({ logic: fc.constantFrom("AND", "OR"), groups: fc.array(group, { minLength: depth === 1 ? 1 : 0, maxLength: 3 }) });
}

export function generatedProject(): fc.Arbitrary<GeneratedProject> {
  const instant = fc.integer({ min: Date.parse("2001-01-01T00:00:00Z"), max: Date.parse("2039-01-01T00:00:00Z") });
  const registry = fc
    .tuple(...topLevelKeys.map((key) => fc.option(fc.constantFrom(...fieldTypes), { nil: undefined }).map((type) => [key, type] as const)))
    .map((entries) => new Map(entries.flatMap(([key, type]) => (type ? [[key, type] as const] : []))));
  return fc.tuple(instant, registry).chain(([now, fields]) => {
    const treeOver = (segments: readonly string[], faulty: boolean) => conditionTree({ now, registry: fields, segments, faulty });
    return fc
      .record({
        contacts: contacts(now),
        dynamic: fc.tuple(
          treeOver(segmentIds.slice(0, 2), false),
          treeOver(segmentIds.slice(0, 3), false),
          treeOver(segmentIds.slice(0, 4), false),
        ),
        picks: fc.array(fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }), { minLength: 2, maxLength: 2 }),
        // A tree in four may hold filters that are not valid: both back ends must refuse it alike.
        tree: fc.constantFrom(false, false, false, true).chain((faulty) => treeOver(segmentIds.slice(0, 5), faulty)),
      })
      .map(({ contacts: generated, dynamic, picks, tree }) => {
        const segments = new Map<string, SegmentDefinition>(staticSegmentIds.map((id) => [id, { type: "STATIC" }]));
        dynamic.forEach((condition, index) => {
          segments.set(segmentIds[index + 2] ?? "", { type: "DYNAMIC", condition: condition as ConditionTree });
        });
        const members = new Map(
          staticSegmentIds.map((id, index) => [
            id,
            generated.filter((_, position) => picks[index]?.[position]).map((contact) => contact.id),
          ]),
        );
        return { now: new Date(now), registry: fields, segments, members, contacts: generated, tree };
      });
  });
}
