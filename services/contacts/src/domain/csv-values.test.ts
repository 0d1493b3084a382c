import { describe, expect, it } from "vitest";
import { typeCsvValue } from "./csv-values.js";

describe("CSV value typing (SPEC.md CSV import rules 4)", () => {
  it.each([
    ["true", true],
    ["TRUE", true],
    ["Yes", true],
    ["no", false],
    ["False", false],
    ["42", 42],
    ["-7", -7],
    ["0", 0],
    ["3.14", 3.14],
    ["0.5", 0.5],
    ["-0.25", -0.25],
    ["007", "007"],
    ["+33", "+33"],
    ["+1.5", "+1.5"],
    ["1e5", "1e5"],
    ["2.5E-3", "2.5E-3"],
    [".5", ".5"],
    ["1.", "1."],
    ["1,000", "1,000"],
    ["4111111111111111", "4111111111111111"],
    ["123456789012345", 123456789012345],
    ["2024-05-01", "2024-05-01"],
    ["2024-05-01T10:20:30.000Z", "2024-05-01T10:20:30.000Z"],
    ["hello", "hello"],
    ["", ""],
  ])("%j becomes %j", (cell, value) => {
    expect(typeCsvValue(cell)).toEqual(value);
  });
});
