import { describe, expect, it } from "vitest";
import { receivedOf } from "./errors.js";

describe("receivedOf", () => {
  it("writes a short value as JSON, as it was", () => {
    for (const value of ["text", 42, true, null, { a: [1, "b"] }, []]) expect(receivedOf(value)).toBe(JSON.stringify(value));
  });

  it("cuts a long value after 200 characters", () => {
    const received = receivedOf("x".repeat(40_000_000));
    expect(received).toBe(`"${"x".repeat(199)}…`);
    expect(receivedOf(Array.from({ length: 50_000 }, () => 0))).toMatch(/^\[0,0,.*…$/);
  });

  it("writes 100,000 nested arrays only as deep as it shows them, where JSON.stringify overflows the stack", () => {
    let deep: unknown = 1;
    for (let level = 0; level < 100_000; level++) deep = [deep];
    expect(() => JSON.stringify(deep)).toThrow(RangeError);
    expect(receivedOf(deep)).toBe(`${"[".repeat(16)}[…]${"]".repeat(16)}`);
  });
});
