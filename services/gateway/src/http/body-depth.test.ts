import { describe, expect, it } from "vitest";
import { maxSendBodyDepth } from "../routes/delivery/send-body.js";
import { maxBodyDepth, nestedTooDeepUnder } from "./body-depth.js";

const nested = (depth: number): unknown => {
  let value: unknown = 1;
  for (let level = 0; level < depth; level++) value = { a: value };
  return value;
};

describe("nestedTooDeepUnder", () => {
  it("names the top-level property that nests past the bound, counting the body as the first level", () => {
    expect(nestedTooDeepUnder({ to: "a@example.com", data: nested(maxBodyDepth - 1) })).toBeUndefined();
    expect(nestedTooDeepUnder({ to: "a@example.com", data: nested(maxBodyDepth) })).toBe("data");
    expect(nestedTooDeepUnder(nested(maxBodyDepth + 1))).toBe("a");
    expect(nestedTooDeepUnder([[nested(maxBodyDepth)]])).toBe("");
  });

  it("walks 100,000 levels without recursion", () => {
    expect(nestedTooDeepUnder({ data: nested(100_000) })).toBe("data");
  });

  it("is the bound /v1/send's parsing thread applies too", () => {
    expect(maxSendBodyDepth).toBe(maxBodyDepth);
  });
});
