import { describe, expect, it } from "vitest";
import { retentionOutOfBounds, retentionViolation } from "./retention.js";

describe("retentionViolation", () => {
  const window = { defaultDays: 30, minDays: 7, maxDays: 365 };

  it("accepts a whole number of days within the bounds, and none (the default)", () => {
    for (const days of [7, 30, 365, undefined]) expect(retentionViolation("activityDays", days, window)).toBeUndefined();
  });

  it("names the field, the bounds and what was sent otherwise", () => {
    for (const days of [6, 366, 30.5, 0, -1]) {
      expect(retentionViolation("activityDays", days, window)).toEqual({
        field: "activityDays",
        code: "out_of_bounds",
        message: "must be a whole number of days from 7 to 365 (this deployment's bounds)",
        received: String(days),
      });
    }
  });

  it("makes one INVALID_ARGUMENT RETENTION_OUT_OF_BOUNDS of the violations", () => {
    const violation = retentionViolation("trackedEventsDays", 1_000, window);
    const error = retentionOutOfBounds(violation ? [violation] : []);
    expect(error).toMatchObject({ kind: "invalid-argument", code: "RETENTION_OUT_OF_BOUNDS", fieldViolations: [violation] });
  });
});
