import { describe, expect, it } from "vitest";
import { segmentSlug } from "./segment-slug.js";

describe("segmentSlug", () => {
  it("lower-cases, turns spaces into dashes and drops other characters", () => {
    expect(segmentSlug("VIP Customers!", "id")).toBe("vip-customers");
    expect(segmentSlug("  Big   spenders (EU) ", "id")).toBe("big-spenders-eu");
    expect(segmentSlug("plan-a_b.c", "id")).toBe("plan-abc");
  });

  it("falls back to the id when nothing is left", () => {
    expect(segmentSlug("¡¿!?", "0b7e")).toBe("0b7e");
  });
});
