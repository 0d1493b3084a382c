import { ConditionError, type ConditionTree, type SegmentDefinition } from "@herald/conditions";
import { describe, expect, it } from "vitest";
import { type CompileContext, compileCondition } from "./condition-sql.js";

const staticId = "aaaaaaaa-0000-4000-8000-000000000000";
const loopId = "bbbbbbbb-0000-4000-8000-000000000000";
const segments = new Map<string, SegmentDefinition>([
  [staticId, { type: "STATIC" }],
  [
    loopId,
    { type: "DYNAMIC", condition: { logic: "AND", groups: [{ filters: [{ field: `segment.${loopId}`, operator: "memberOfSegment" }] }] } },
  ],
]);
const context: CompileContext = {
  now: new Date("2024-06-15T12:00:00.000Z"),
  fieldType: (key) => (key === "age" ? "number" : undefined),
  segment: (id) => segments.get(id),
};

describe("compileCondition", () => {
  it("puts every value, key and name in a parameter, never in the SQL text", () => {
    const hostile = "x'); DROP TABLE contacts; --";
    const tree: ConditionTree = {
      logic: "OR",
      groups: [
        {
          filters: [
            { field: `data.${hostile}.b`, operator: "equals", value: hostile },
            { field: "email", operator: "contains", value: hostile },
            { field: `event.${hostile}`, operator: "triggeredWithin", value: 2, unit: "days" },
            { field: "data.age", operator: "greaterThan", value: 41 },
            { field: `segment.${staticId}`, operator: "memberOfSegment" },
          ],
        },
      ],
    };
    const { sql, values } = compileCondition(tree, context);
    expect(sql).not.toContain("DROP");
    expect(sql).not.toContain("41");
    expect(sql).not.toContain(staticId);
    expect(values).toContain(hostile);
    expect(values).toContain(`{"${hostile}":{"b":"x'); DROP TABLE contacts; --"}}`);
    expect(values).toContain('{"value":41}');
    expect(values).toContain(staticId);
    expect(values).toContain("2024-06-13T12:00:00.000Z");
  });

  it("numbers the parameters from firstParameter, each once and in order", () => {
    // As stored by a client that wrote an alias: compilation reads it as validation does.
    const tree = {
      logic: "AND",
      groups: [
        {
          filters: [
            { field: "data.age", operator: "gte", value: 18 },
            { field: "email", operator: "equals", value: "A@B.C" },
          ],
        },
      ],
    } as unknown as ConditionTree;
    const { sql, values } = compileCondition(tree, { ...context, firstParameter: 3 });
    const numbers = [...sql.matchAll(/\$(\d+)/g)].map((match) => Number(match[1]));
    expect([...new Set(numbers)]).toEqual(values.map((_, index) => index + 3));
    expect(values).toEqual(['strict $."age" >= $value', '{"value":18}', "a@b.c"]);
    expect(sql).toBe("(coalesce(jsonb_path_match(c.data, $3::jsonpath, $4::jsonb, true), false) AND c.email = $5::text)");
  });

  it("gives constants for empty trees", () => {
    expect(compileCondition({ logic: "AND", groups: [] }, context)).toEqual({ sql: "TRUE", values: [] });
    expect(compileCondition({ logic: "OR", groups: [] }, context)).toEqual({ sql: "FALSE", values: [] });
  });

  it("refuses trees that are not valid in the context, and segment cycles", () => {
    const invalid = { logic: "AND", groups: [{ filters: [{ field: "data.age", operator: "contains", value: "1" }] }] } as ConditionTree;
    expect(() => compileCondition(invalid, context)).toThrow(ConditionError);
    const cycle: ConditionTree = {
      logic: "AND",
      groups: [{ filters: [{ field: "segment", operator: "memberOfSegment", value: loopId }] }],
    };
    expect(() => compileCondition(cycle, context)).toThrow(/cycle/);
    expect(() => compileCondition({ logic: "AND", groups: [] }, { ...context, firstParameter: 0 })).toThrow(RangeError);
  });
});
