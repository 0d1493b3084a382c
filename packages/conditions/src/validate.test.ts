import { describe, expect, it } from "vitest";
import { referencesOf } from "./references.js";
import type { ConditionTree, FieldType, SegmentDefinition, ValidationContext } from "./types.js";
import { validateCondition } from "./validate.js";

const types: Record<string, FieldType> = { age: "number", plan: "string", vip: "boolean", signup: "date" };
const context: ValidationContext = { fieldType: (key) => types[key] };

const tree = (...filters: unknown[]) => ({ logic: "AND", groups: [{ filters }] });

/** The issues of a one-filter tree, as [path, code]. */
function issuesOf(input: unknown, options: Partial<ValidationContext> = {}): Array<[string, string]> {
  const result = validateCondition(input, { ...context, ...options });
  return result.ok ? [] : result.errors.map((error) => [error.path, error.code]);
}

function messageOf(input: unknown): string {
  const result = validateCondition(input, context);
  return result.ok ? "" : result.errors.map((error) => error.message).join("\n");
}

const segmentA = "aaaaaaaa-0000-4000-8000-000000000000";
const segmentB = "bbbbbbbb-0000-4000-8000-000000000000";
const segmentS = "cccccccc-0000-4000-8000-000000000000";

describe("validateCondition", () => {
  it("returns the tree in normal form: aliases resolved, unused values and units and unknown keys dropped", () => {
    const result = validateCondition(
      {
        logic: "OR",
        note: "ignored",
        groups: [
          {
            filters: [
              { field: "data.age", operator: "gte", value: 18, unit: "days" },
              { field: "data.plan", operator: "exists", value: "x" },
              { field: "createdAt", operator: "within", value: 7, unit: "days" },
            ],
            conditions: { logic: "AND", groups: [{ filters: [{ field: "event.signup", operator: "triggered" }] }] },
          },
          {},
        ],
      },
      context,
    );
    expect(result).toEqual({
      ok: true,
      tree: {
        logic: "OR",
        groups: [
          {
            filters: [
              { field: "data.age", operator: "greaterThanOrEqual", value: 18 },
              { field: "data.plan", operator: "exists" },
              { field: "createdAt", operator: "within", value: 7, unit: "days" },
            ],
            conditions: { logic: "AND", groups: [{ filters: [{ field: "event.signup", operator: "triggered" }] }] },
          },
          { filters: [] },
        ],
      },
    });
  });

  it.each([
    ["a string", "nope", [["condition", "not_an_object"]]],
    ["an array", [], [["condition", "not_an_object"]]],
    ["bad logic", { logic: "XOR", groups: [] }, [["condition.logic", "invalid_logic"]]],
    ["no logic", { groups: [] }, [["condition.logic", "invalid_logic"]]],
    ["no groups", { logic: "AND" }, [["condition.groups", "required"]]],
    ["groups not an array", { logic: "AND", groups: {} }, [["condition.groups", "not_an_array"]]],
    ["a group not an object", { logic: "AND", groups: [{ filters: [] }, 3] }, [["condition.groups[1]", "not_an_object"]]],
    ["filters not an array", { logic: "AND", groups: [{ filters: "x" }] }, [["condition.groups[0].filters", "not_an_array"]]],
    ["a filter not an object", tree({ field: "email", operator: "exists" }, "x"), [["condition.groups[0].filters[1]", "not_an_object"]]],
    ["a nested tree not an object", { logic: "AND", groups: [{ conditions: 1 }] }, [["condition.groups[0].conditions", "not_an_object"]]],
  ])("refuses %s", (_, input, expected) => {
    expect(issuesOf(input)).toEqual(expected);
  });

  it.each([
    ["no field", { operator: "exists" }, [["field", "required"]]],
    ["a field that is no string", { field: 3, operator: "exists" }, [["field", "invalid_type"]]],
    ["an unknown field", { field: "name", operator: "exists" }, [["field", "unknown_field"]]],
    ["an empty data key", { field: "data.a..b", operator: "exists" }, [["field", "unknown_field"]]],
    ["an unknown email activity", { field: "email.read", operator: "triggered" }, [["field", "unknown_field"]]],
    ["a segment id that is no UUID", { field: "segment.vip", operator: "memberOfSegment" }, [["field", "unknown_field"]]],
    ["a field with NUL", { field: "data.a\u0000", operator: "exists" }, [["field", "unknown_field"]]],
    ["no operator", { field: "email" }, [["operator", "required"]]],
    ["an unknown operator", { field: "email", operator: "between", value: 1 }, [["operator", "unknown_operator"]]],
    ["contains on a number", { field: "data.age", operator: "contains", value: "1" }, [["operator", "operator_not_allowed"]]],
    ["within on a string", { field: "data.plan", operator: "within", value: 1, unit: "days" }, [["operator", "operator_not_allowed"]]],
    ["gt on a boolean", { field: "subscribed", operator: "gt", value: true }, [["operator", "operator_not_allowed"]]],
    ["triggered on data", { field: "data.plan", operator: "triggered" }, [["operator", "operator_not_allowed"]]],
    ["contains on an event", { field: "event.signup", operator: "contains", value: "x" }, [["operator", "operator_not_allowed"]]],
    ["equals on a segment", { field: `segment.${segmentA}`, operator: "equals", value: 1 }, [["operator", "operator_not_allowed"]]],
    ["a missing value", { field: "data.age", operator: "equals" }, [["value", "missing_value"]]],
    ["a null value", { field: "email", operator: "contains", value: null }, [["value", "missing_value"]]],
    ["a string for a number", { field: "data.age", operator: "gt", value: "18" }, [["value", "invalid_value"]]],
    ["a number for a string", { field: "data.plan", operator: "equals", value: 1 }, [["value", "invalid_value"]]],
    ["a string for a boolean", { field: "data.vip", operator: "equals", value: "true" }, [["value", "invalid_value"]]],
    ["a non-date for a date", { field: "data.signup", operator: "gt", value: "2024-02-30" }, [["value", "invalid_value"]]],
    ["an object for an unregistered key", { field: "data.other", operator: "equals", value: { a: 1 } }, [["value", "invalid_value"]]],
    ["NUL in a string", { field: "data.plan", operator: "equals", value: "a\u0000" }, [["value", "invalid_value"]]],
    ["an unpaired surrogate", { field: "email", operator: "contains", value: "\ud800" }, [["value", "invalid_value"]]],
    ["a count that is no whole number", { field: "event.signup", operator: "gte", value: 1.5 }, [["value", "invalid_value"]]],
    ["a negative window", { field: "createdAt", operator: "within", value: -1, unit: "days" }, [["value", "invalid_value"]]],
    ["a window without unit", { field: "event.signup", operator: "triggeredWithin", value: 1 }, [["unit", "missing_unit"]]],
    ["an unknown unit", { field: "data.signup", operator: "olderThan", value: 1, unit: "years" }, [["unit", "unknown_unit"]]],
    [
      "a window without value nor unit",
      { field: "createdAt", operator: "olderThan" },
      [
        ["value", "missing_value"],
        ["unit", "missing_unit"],
      ],
    ],
    ["segment without an id", { field: "segment", operator: "memberOfSegment" }, [["value", "missing_value"]]],
    ["segment with a bad id", { field: "segment", operator: "memberOfSegment", value: "x" }, [["value", "invalid_value"]]],
  ])("refuses a filter with %s", (_, filter, expected) => {
    expect(issuesOf(tree({ field: "email", operator: "exists" }, filter))).toEqual(
      expected.map(([where, code]) => [`condition.groups[0].filters[1].${where}`, code]),
    );
  });

  it("says which operators a field takes, and of which type it is", () => {
    expect(messageOf(tree({ field: "data.age", operator: "contains", value: "1" }))).toBe(
      '"contains" is not valid for data.age, a number field; use one of: equals, notEquals, greaterThan, lessThan, greaterThanOrEqual, lessThanOrEqual, exists, notExists',
    );
    expect(messageOf(tree({ field: "data.other", operator: "gt", value: "abc" }))).toContain(
      "data.other, a string field (no type is registered for it); use one of: equals, notEquals, contains",
    );
    expect(messageOf(tree({ field: "data.plan", operator: "between", value: 1 }))).toContain("use one of: equals, notEquals, contains");
  });

  it("types unregistered and nested keys by the operator, else by the value", () => {
    const valid = (filter: unknown) => validateCondition(tree(filter), context).ok;
    expect(valid({ field: "data.address.city", operator: "contains", value: "2024-01-01" })).toBe(true);
    expect(valid({ field: "data.address.since", operator: "within", value: 2, unit: "hours" })).toBe(true);
    expect(valid({ field: "data.score", operator: "gt", value: 3 })).toBe(true);
    expect(valid({ field: "data.seen", operator: "lt", value: "2024-01-01" })).toBe(true);
    expect(valid({ field: "data.seen", operator: "lt", value: "soon" })).toBe(false);
    // A registered type counts for top-level keys only.
    expect(valid({ field: "data.age.months", operator: "contains", value: "x" })).toBe(true);
  });

  it("collects every issue of the tree at once", () => {
    expect(
      issuesOf({
        logic: "and",
        groups: [
          {
            filters: [
              { field: "x", operator: "equals", value: 1 },
              { field: "data.age", operator: "nope" },
            ],
          },
        ],
      }),
    ).toEqual([
      ["condition.logic", "invalid_logic"],
      ["condition.groups[0].filters[0].field", "unknown_field"],
      ["condition.groups[0].filters[1].operator", "unknown_operator"],
    ]);
  });

  it("names the root as the caller does", () => {
    expect(issuesOf({ logic: "AND", groups: 1 }, { root: "audienceCondition" })).toEqual([["audienceCondition.groups", "not_an_array"]]);
  });

  it("allows five levels of nesting by default, and as many as asked", () => {
    const nested = (levels: number): unknown =>
      levels === 1 ? { logic: "AND", groups: [] } : { logic: "AND", groups: [{ conditions: nested(levels - 1) }] };
    expect(issuesOf(nested(5))).toEqual([]);
    expect(issuesOf(nested(6))).toEqual([
      ["condition.groups[0].conditions.groups[0].conditions.groups[0].conditions.groups[0].conditions.groups[0].conditions", "too_deep"],
    ]);
    expect(issuesOf(nested(3), { maxDepth: 2 })).toEqual([["condition.groups[0].conditions.groups[0].conditions", "too_deep"]]);
  });

  it("allows 100 filters by default, and as many as asked", () => {
    const filters = (count: number) => Array.from({ length: count }, () => ({ field: "email", operator: "exists" }));
    expect(issuesOf({ logic: "OR", groups: [{ filters: filters(60) }, { filters: filters(40) }] })).toEqual([]);
    expect(issuesOf({ logic: "OR", groups: [{ filters: filters(60) }, { filters: filters(41) }] })).toEqual([
      ["condition", "too_many_filters"],
    ]);
    expect(issuesOf(tree(...filters(3)), { maxFilters: 2 })).toEqual([["condition", "too_many_filters"]]);
  });

  describe("with the project's segments", () => {
    const segments = new Map<string, SegmentDefinition>([
      [segmentS, { type: "STATIC" }],
      [segmentA, { type: "DYNAMIC", condition: tree({ field: `segment.${segmentB}`, operator: "memberOfSegment" }) as ConditionTree }],
      [
        segmentB,
        { type: "DYNAMIC", condition: tree({ field: "segment", operator: "notMemberOfSegment", value: segmentA }) as ConditionTree },
      ],
    ]);
    const segment = (id: string) => segments.get(id);

    it("accepts known segments, by either spelling and in any case", () => {
      expect(issuesOf(tree({ field: `segment.${segmentS.toUpperCase()}`, operator: "memberOfSegment" }), { segment })).toEqual([]);
      expect(issuesOf(tree({ field: "segment", operator: "notMemberOfSegment", value: segmentS }), { segment })).toEqual([]);
    });

    it("refuses unknown segments, where the id is written", () => {
      const unknown = "dddddddd-0000-4000-8000-000000000000";
      expect(issuesOf(tree({ field: `segment.${unknown}`, operator: "memberOfSegment" }), { segment })).toEqual([
        ["condition.groups[0].filters[0].field", "unknown_segment"],
      ]);
      expect(issuesOf(tree({ field: "segment", operator: "memberOfSegment", value: unknown }), { segment })).toEqual([
        ["condition.groups[0].filters[0].value", "unknown_segment"],
      ]);
      // Without the segments, only the syntax of the reference is checked.
      expect(issuesOf(tree({ field: `segment.${unknown}`, operator: "memberOfSegment" }))).toEqual([]);
    });

    it("refuses a cycle through DYNAMIC segments, at the filter that leads into it", () => {
      const result = validateCondition(
        tree({ field: "email", operator: "exists" }, { field: `segment.${segmentA}`, operator: "memberOfSegment" }),
        {
          ...context,
          segment,
        },
      );
      expect(result).toEqual({
        ok: false,
        errors: [
          {
            path: "condition.groups[0].filters[1].field",
            code: "segment_cycle",
            message: `Segments refer to each other in a cycle: ${segmentA} → ${segmentB} → ${segmentA}`,
          },
        ],
      });
    });

    it("refuses a DYNAMIC segment whose own condition is not valid", () => {
      const broken = new Map<string, SegmentDefinition>([
        [segmentA, { type: "DYNAMIC", condition: tree({ field: "data.age", operator: "contains", value: "x" }) as ConditionTree }],
      ]);
      expect(issuesOf(tree({ field: `segment.${segmentA}`, operator: "memberOfSegment" }), { segment: (id) => broken.get(id) })).toEqual([
        ["condition.groups[0].filters[0].field", "invalid_segment"],
      ]);
    });
  });
});

describe("referencesOf", () => {
  it("lists the data keys, event names and segments a tree names, each once and sorted", () => {
    const result = validateCondition(
      {
        logic: "AND",
        groups: [
          {
            filters: [
              { field: "data.plan", operator: "equals", value: "pro" },
              { field: "data.address.city", operator: "exists" },
              { field: "email", operator: "contains", value: "@" },
              { field: "event.order.completed", operator: "triggered" },
              { field: "email.opened", operator: "triggeredWithin", value: 3, unit: "days" },
              { field: `segment.${segmentB.toUpperCase()}`, operator: "memberOfSegment" },
            ],
            conditions: {
              logic: "OR",
              groups: [
                {
                  filters: [
                    { field: "data.plan", operator: "exists" },
                    { field: "segment", operator: "notMemberOfSegment", value: segmentA },
                  ],
                },
              ],
            },
          },
        ],
      },
      context,
    );
    if (!result.ok) throw new Error("the tree is valid");
    expect(referencesOf(result.tree)).toEqual({
      fields: ["address", "plan"],
      events: ["email.open", "order.completed"],
      segments: [segmentA, segmentB],
    });
  });
});
