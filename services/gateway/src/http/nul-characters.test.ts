import { describe, expect, it } from "vitest";
import { pathOfNul } from "./nul-characters.js";

describe("pathOfNul", () => {
  it("names the string or key holding NUL by its dotted path", () => {
    expect(pathOfNul({ to: [{ email: "a@example.com" }, { name: "b\0" }] })).toBe("to[1].name");
    expect(pathOfNul({ data: { "first\0name": "Ada" } })).toBe("data.first\0name");
    expect(pathOfNul("raw\0")).toBe("");
    expect(pathOfNul([1, "x", ["y\0"]])).toBe("[2][0]");
  });

  it("finds nothing in values without NUL, whatever their shape", () => {
    for (const value of [undefined, null, 0, true, "text", { a: [{ b: "c" }], d: null }, []]) expect(pathOfNul(value)).toBeUndefined();
  });

  it("walks any depth without recursion", () => {
    let deep: unknown = "end\0";
    for (let level = 0; level < 100_000; level++) deep = [deep];
    expect(pathOfNul(deep)).toBe("[0]".repeat(100_000));
  });
});
