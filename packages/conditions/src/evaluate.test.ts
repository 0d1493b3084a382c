import { describe, expect, it } from "vitest";
import { ConditionError } from "./condition-error.js";
import { evaluateCondition } from "./evaluate.js";
import type {
  ConditionFilter,
  ConditionSubject,
  ConditionTree,
  EvaluationContext,
  FieldType,
  JsonObject,
  SegmentDefinition,
} from "./types.js";

const now = new Date("2024-06-15T12:00:00.000Z");
const ago = (ms: number) => new Date(now.getTime() - ms);
const hour = 3_600_000;
const day = 24 * hour;

const staticId = "aaaaaaaa-0000-4000-8000-000000000000";
const dynamicId = "bbbbbbbb-0000-4000-8000-000000000000";
const types: Record<string, FieldType> = { age: "number", plan: "string", vip: "boolean", signup: "date" };
const segments = new Map<string, SegmentDefinition>([
  [staticId, { type: "STATIC" }],
  [
    dynamicId,
    { type: "DYNAMIC", condition: { logic: "AND", groups: [{ filters: [{ field: "data.plan", operator: "equals", value: "pro" }] }] } },
  ],
]);
const context: EvaluationContext = { now, fieldType: (key) => types[key], segment: (id) => segments.get(id) };

function subject(
  options: { data?: JsonObject; events?: Array<[string, Date]>; segmentIds?: string[]; email?: string } = {},
): ConditionSubject {
  return {
    contact: {
      id: "c1",
      email: options.email ?? "ann@example.com",
      subscribed: true,
      createdAt: ago(2 * day),
      updatedAt: ago(hour),
      data: options.data ?? {},
    },
    events: (options.events ?? []).map(([name, createdAt]) => ({ name, createdAt })),
    segmentIds: new Set(options.segmentIds ?? []),
  };
}

const only = (filter: ConditionFilter): ConditionTree => ({ logic: "AND", groups: [{ filters: [filter] }] });
const matches = (filter: ConditionFilter, who: ConditionSubject) => evaluateCondition(only(filter), who, context);
const withData = (data: JsonObject) => subject({ data });

describe("evaluateCondition on data", () => {
  it.each<[string, ConditionFilter, JsonObject, boolean]>([
    ["string equals", { field: "data.plan", operator: "equals", value: "pro" }, { plan: "pro" }, true],
    ["string equals is case-sensitive", { field: "data.plan", operator: "equals", value: "pro" }, { plan: "Pro" }, false],
    ["string equals on another type", { field: "data.plan", operator: "equals", value: "5" }, { plan: 5 }, false],
    ["string equals on a missing key", { field: "data.plan", operator: "equals", value: "pro" }, {}, false],
    ["notEquals on a missing key", { field: "data.plan", operator: "notEquals", value: "pro" }, {}, true],
    ["notEquals on null", { field: "data.plan", operator: "notEquals", value: "pro" }, { plan: null }, true],
    ["notEquals on the value", { field: "data.plan", operator: "notEquals", value: "pro" }, { plan: "pro" }, false],
    ["contains", { field: "data.plan", operator: "contains", value: "ro" }, { plan: "pro" }, true],
    ["contains takes % literally", { field: "data.plan", operator: "contains", value: "%" }, { plan: "pro" }, false],
    ["contains the empty string", { field: "data.plan", operator: "contains", value: "" }, { plan: "pro" }, true],
    ["contains on a number", { field: "data.plan", operator: "contains", value: "5" }, { plan: 5 }, false],
    ["notContains on an array", { field: "data.plan", operator: "notContains", value: "a" }, { plan: ["a"] }, true],
    ["exists", { field: "data.plan", operator: "exists" }, { plan: "" }, true],
    ["exists on a value of another type", { field: "data.plan", operator: "exists" }, { plan: [] }, true],
    ["exists on null", { field: "data.plan", operator: "exists" }, { plan: null }, false],
    ["notExists on a missing key", { field: "data.plan", operator: "notExists" }, {}, true],
    ["number equals", { field: "data.age", operator: "equals", value: 30 }, { age: 30 }, true],
    ["number equals on a numeric string", { field: "data.age", operator: "equals", value: 30 }, { age: "30" }, false],
    ["greaterThan", { field: "data.age", operator: "greaterThan", value: 18 }, { age: 18.5 }, true],
    ["greaterThan at the value", { field: "data.age", operator: "greaterThan", value: 18 }, { age: 18 }, false],
    ["greaterThanOrEqual", { field: "data.age", operator: "greaterThanOrEqual", value: 18 }, { age: 18 }, true],
    ["lessThan", { field: "data.age", operator: "lessThan", value: 18 }, { age: -1 }, true],
    ["lessThanOrEqual", { field: "data.age", operator: "lessThanOrEqual", value: 18 }, { age: 19 }, false],
    ["a comparison on a numeric string", { field: "data.age", operator: "lessThan", value: 18 }, { age: "5" }, false],
    ["a comparison on a boolean", { field: "data.age", operator: "greaterThan", value: 0 }, { age: true }, false],
    ["notEquals on a numeric string", { field: "data.age", operator: "notEquals", value: 30 }, { age: "30" }, true],
    ["boolean equals", { field: "data.vip", operator: "equals", value: true }, { vip: true }, true],
    ["boolean equals on a string", { field: "data.vip", operator: "equals", value: true }, { vip: "true" }, false],
    ["boolean notEquals on a missing key", { field: "data.vip", operator: "notEquals", value: true }, {}, true],
    [
      "date equals, any spelling",
      { field: "data.signup", operator: "equals", value: "2024-01-01" },
      { signup: "2024-01-01T00:00:00.000Z" },
      true,
    ],
    ["date greaterThan", { field: "data.signup", operator: "greaterThan", value: "2024-01-01" }, { signup: "2024-01-01T00:00:01Z" }, true],
    [
      "date lessThanOrEqual",
      { field: "data.signup", operator: "lessThanOrEqual", value: "2024-01-01T00:00:00Z" },
      { signup: "2024-01-01" },
      true,
    ],
    [
      "date comparison on an impossible date",
      { field: "data.signup", operator: "lessThan", value: "2025-01-01" },
      { signup: "2024-02-30" },
      false,
    ],
    ["date comparison on text", { field: "data.signup", operator: "lessThan", value: "2025-01-01" }, { signup: "yesterday" }, false],
    ["date comparison on a number", { field: "data.signup", operator: "lessThan", value: "2025-01-01" }, { signup: 20240101 }, false],
    ["within", { field: "data.signup", operator: "within", value: 7, unit: "days" }, { signup: ago(3 * day).toISOString() }, true],
    [
      "within, at its start",
      { field: "data.signup", operator: "within", value: 7, unit: "days" },
      { signup: ago(7 * day).toISOString() },
      true,
    ],
    [
      "within, before its start",
      { field: "data.signup", operator: "within", value: 7, unit: "days" },
      { signup: ago(7 * day + 1).toISOString() },
      false,
    ],
    [
      "within, in the future",
      { field: "data.signup", operator: "within", value: 7, unit: "days" },
      { signup: ago(-1000).toISOString() },
      false,
    ],
    ["within on a date only", { field: "data.signup", operator: "within", value: 7, unit: "days" }, { signup: "2024-06-14" }, false],
    ["olderThan", { field: "data.signup", operator: "olderThan", value: 1, unit: "weeks" }, { signup: "2024-06-01T00:00:00Z" }, true],
    [
      "olderThan, at the edge",
      { field: "data.signup", operator: "olderThan", value: 1, unit: "weeks" },
      { signup: ago(7 * day).toISOString() },
      false,
    ],
    ["olderThan on a date only", { field: "data.signup", operator: "olderThan", value: 1, unit: "weeks" }, { signup: "2020-01-01" }, false],
    [
      "notEquals on a date of another spelling",
      { field: "data.signup", operator: "notEquals", value: "2024-01-01" },
      { signup: "2024-01-01T00:00:00Z" },
      false,
    ],
  ])("%s", (_, filter, data, expected) => {
    expect(matches(filter, withData(data))).toBe(expected);
  });

  it("follows nested objects, never arrays, and reads keys with spaces", () => {
    const city = { field: "data.address.city", operator: "equals", value: "Paris" } as const;
    expect(matches(city, withData({ address: { city: "Paris" } }))).toBe(true);
    expect(matches(city, withData({ address: [{ city: "Paris" }] }))).toBe(false);
    expect(matches(city, withData({ "address.city": "Paris" }))).toBe(false);
    expect(matches({ field: "data.first name", operator: "equals", value: "Ann" }, withData({ "first name": "Ann" }))).toBe(true);
    expect(matches({ field: "data.constructor", operator: "exists" }, withData({}))).toBe(false);
  });

  it("types unregistered and nested keys by the filter's value", () => {
    expect(matches({ field: "data.seen", operator: "equals", value: "2024-01-01" }, withData({ seen: "2024-01-01T00:00:00Z" }))).toBe(true);
    // A registered string compares as text: the same values then differ.
    expect(matches({ field: "data.plan", operator: "equals", value: "2024-01-01" }, withData({ plan: "2024-01-01T00:00:00Z" }))).toBe(
      false,
    );
    expect(matches({ field: "data.stats.visits", operator: "greaterThan", value: 2 }, withData({ stats: { visits: 3 } }))).toBe(true);
  });
});

describe("evaluateCondition on the standard fields", () => {
  it.each<[string, ConditionFilter, boolean]>([
    ["email equals, whatever the case of the value", { field: "email", operator: "equals", value: "ANN@Example.com" }, true],
    ["email contains", { field: "email", operator: "contains", value: "EXAMPLE" }, true],
    ["email notContains", { field: "email", operator: "notContains", value: "@test" }, true],
    ["email exists", { field: "email", operator: "exists" }, true],
    ["email notExists", { field: "email", operator: "notExists" }, false],
    ["subscribed equals", { field: "subscribed", operator: "equals", value: true }, true],
    ["subscribed notEquals", { field: "subscribed", operator: "notEquals", value: true }, false],
    ["createdAt within", { field: "createdAt", operator: "within", value: 3, unit: "days" }, true],
    ["createdAt olderThan", { field: "createdAt", operator: "olderThan", value: 36, unit: "hours" }, true],
    ["updatedAt within", { field: "updatedAt", operator: "within", value: 30, unit: "minutes" }, false],
    ["createdAt greaterThan a date", { field: "createdAt", operator: "greaterThan", value: "2024-06-13" }, true],
    ["createdAt equals its instant", { field: "createdAt", operator: "equals", value: "2024-06-13T12:00:00Z" }, true],
  ])("%s", (_, filter, expected) => {
    expect(matches(filter, subject())).toBe(expected);
  });
});

describe("evaluateCondition on events", () => {
  const events: Array<[string, Date]> = [
    ["signup", ago(10 * day)],
    ["order.completed", ago(2 * hour)],
    ["order.completed", ago(3 * day)],
    // What the shorthand email.opened reads: the event email activity is recorded as.
    ["email.open", ago(day)],
  ];
  const someone = subject({ events });

  it.each<[string, ConditionFilter, boolean]>([
    ["triggered", { field: "event.order.completed", operator: "triggered" }, true],
    ["triggered, another name", { field: "event.Signup", operator: "triggered" }, false],
    ["notTriggered", { field: "event.refund", operator: "notTriggered" }, true],
    ["triggeredWithin", { field: "event.order.completed", operator: "triggeredWithin", value: 3, unit: "hours" }, true],
    ["triggeredWithin, at the window's start", { field: "email.opened", operator: "triggeredWithin", value: 1, unit: "days" }, true],
    ["triggeredWithin, too long ago", { field: "event.signup", operator: "triggeredWithin", value: 1, unit: "weeks" }, false],
    ["notTriggeredWithin", { field: "event.signup", operator: "notTriggeredWithin", value: 1, unit: "weeks" }, true],
    ["notTriggeredWithin, never", { field: "event.refund", operator: "notTriggeredWithin", value: 1, unit: "weeks" }, true],
    ["triggeredOlderThan, the latest is older", { field: "event.signup", operator: "triggeredOlderThan", value: 1, unit: "weeks" }, true],
    [
      "triggeredOlderThan, the latest is recent",
      { field: "event.order.completed", operator: "triggeredOlderThan", value: 1, unit: "days" },
      false,
    ],
    ["triggeredOlderThan, never", { field: "event.refund", operator: "triggeredOlderThan", value: 1, unit: "days" }, false],
    ["email activity", { field: "email.opened", operator: "triggered" }, true],
    ["a count", { field: "event.order.completed", operator: "greaterThanOrEqual", value: 2 }, true],
    ["a count of none", { field: "event.refund", operator: "equals", value: 0 }, true],
    ["a count, notEquals", { field: "event.signup", operator: "notEquals", value: 1 }, false],
  ])("%s", (_, filter, expected) => {
    expect(matches(filter, someone)).toBe(expected);
  });
});

describe("evaluateCondition on segments", () => {
  it("reads STATIC membership and inlines DYNAMIC conditions", () => {
    const member = subject({ segmentIds: [staticId], data: { plan: "pro" } });
    const other = subject({ data: { plan: "free" } });
    expect(matches({ field: `segment.${staticId}`, operator: "memberOfSegment" }, member)).toBe(true);
    expect(matches({ field: "segment", operator: "notMemberOfSegment", value: staticId.toUpperCase() }, member)).toBe(false);
    expect(matches({ field: `segment.${dynamicId}`, operator: "memberOfSegment" }, member)).toBe(true);
    expect(matches({ field: `segment.${dynamicId}`, operator: "notMemberOfSegment" }, other)).toBe(true);
  });

  it("refuses unknown segments", () => {
    expect(() => matches({ field: "segment.cccccccc-0000-4000-8000-000000000000", operator: "memberOfSegment" }, subject())).toThrow(
      ConditionError,
    );
  });
});

describe("evaluateCondition on trees", () => {
  const yes: ConditionFilter = { field: "email", operator: "exists" };
  const no: ConditionFilter = { field: "email", operator: "notExists" };
  const evaluate = (tree: ConditionTree) => evaluateCondition(tree, subject(), context);

  it("takes an empty AND as true, an empty OR as false, and an empty group as true", () => {
    expect(evaluate({ logic: "AND", groups: [] })).toBe(true);
    expect(evaluate({ logic: "OR", groups: [] })).toBe(false);
    expect(evaluate({ logic: "OR", groups: [{ filters: [] }] })).toBe(true);
  });

  it("ANDs a group's filters and nested tree, and combines groups by logic", () => {
    expect(evaluate({ logic: "OR", groups: [{ filters: [yes, no] }, { filters: [yes] }] })).toBe(true);
    expect(evaluate({ logic: "AND", groups: [{ filters: [yes, no] }, { filters: [yes] }] })).toBe(false);
    expect(evaluate({ logic: "AND", groups: [{ filters: [yes], conditions: { logic: "OR", groups: [{ filters: [no] }] } }] })).toBe(false);
    expect(
      evaluate({ logic: "AND", groups: [{ filters: [yes], conditions: { logic: "OR", groups: [{ filters: [no] }, { filters: [] }] } }] }),
    ).toBe(true);
  });

  it("validates the tree again in its context", () => {
    // Stored while `age` had no type, compared as a number; registered as a string since.
    const stored: ConditionTree = only({ field: "data.age", operator: "greaterThan", value: 3 });
    let error: unknown;
    try {
      evaluateCondition(stored, subject(), { ...context, fieldType: () => "string" });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConditionError);
    expect((error as ConditionError).issues).toEqual([
      expect.objectContaining({ path: "condition.groups[0].filters[0].operator", code: "operator_not_allowed" }),
    ]);
  });
});

describe("a workflow CONDITION's trigger.data and context notations", () => {
  const workflow: EvaluationContext = { ...context, variables: true };
  const who = {
    ...subject({ data: { plan: "free", age: 30 } }),
    trigger: { plan: "pro", order: { total: 120 } },
    context: { tier: "gold" },
  };
  const holds = (filter: ConditionFilter) => evaluateCondition(only(filter), who, workflow);

  it("reads the trigger event's data and the execution's context, not the contact's data", () => {
    expect(holds({ field: "trigger.data.plan", operator: "equals", value: "pro" })).toBe(true);
    expect(holds({ field: "data.plan", operator: "equals", value: "pro" })).toBe(false);
    expect(holds({ field: "trigger.data.order.total", operator: "greaterThan", value: 100 })).toBe(true);
    expect(holds({ field: "context.tier", operator: "equals", value: "gold" })).toBe(true);
    expect(holds({ field: "context.missing", operator: "exists" })).toBe(false);
  });

  it("does not type trigger or context keys by the contact's registered field types", () => {
    // age is registered as a number for contact data; the trigger's age is a string.
    const stringy = { ...who, trigger: { age: "thirty" } };
    expect(evaluateCondition(only({ field: "trigger.data.age", operator: "equals", value: "thirty" }), stringy, workflow)).toBe(true);
  });

  it("are unknown fields outside workflows (segments)", () => {
    expect(() => matches({ field: "trigger.data.plan", operator: "equals", value: "pro" }, who)).toThrow(ConditionError);
    expect(() => matches({ field: "context.tier", operator: "exists" }, who)).toThrow(ConditionError);
  });
});
