import { describe, expect, it } from "vitest";
import type { JsonValue } from "./contact-data.js";
import { inferFieldType } from "./field-type.js";

describe("field type inference", () => {
  it.each([
    [42, "number"],
    [-0.5, "number"],
    [true, "boolean"],
    [false, "boolean"],
    ["2024-05-01", "date"],
    ["2024-05-01T10:20:30Z", "date"],
    ["2024-05-01T10:20:30.123Z", "date"],
    ["2024-05-01T10:20:30+02:00", "string"],
    ["2024-05-01T10:20Z", "string"],
    ["2024-02-30", "string"],
    ["2024-05-01T24:00:00Z", "string"],
    ["01/05/2024", "string"],
    ["42", "string"],
    ["true", "string"],
    ["hello", "string"],
    [{ tier: "gold" }, "string"],
    [["a"], "string"],
  ] as Array<[Exclude<JsonValue, null>, string]>)("%j is %s", (value, type) => {
    expect(inferFieldType(value)).toBe(type);
  });

  it("takes a leap day for a date only in a leap year", () => {
    expect(inferFieldType("2024-02-29")).toBe("date");
    expect(inferFieldType("2023-02-29")).toBe("string");
  });
});
