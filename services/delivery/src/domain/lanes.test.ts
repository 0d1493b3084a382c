import { describe, expect, it } from "vitest";
import { bulkAllowance, firstBulkCursor, laneOf, nextBulkCursor } from "./lanes.js";

describe("lanes", () => {
  it("puts campaign mail in the bulk lane and transactional and workflow mail in the urgent lane", () => {
    expect(laneOf("CAMPAIGN")).toBe("bulk");
    expect(laneOf("TRANSACTIONAL")).toBe("urgent");
    expect(laneOf("WORKFLOW")).toBe("urgent");
  });

  it("keeps the urgent share of the concurrency and the rate out of bulk mail's reach, and always lets a campaign move", () => {
    expect(bulkAllowance({ concurrency: 100, ratePerSecond: 2_000, urgentShare: 0.2 })).toEqual({ concurrency: 80, ratePerSecond: 1_600 });
    expect(bulkAllowance({ concurrency: 3, ratePerSecond: 10, urgentShare: 0.2 })).toEqual({ concurrency: 2, ratePerSecond: 8 });
    expect(bulkAllowance({ concurrency: 1, ratePerSecond: 1, urgentShare: 0.9 })).toEqual({ concurrency: 1, ratePerSecond: 0.1 });
    expect(bulkAllowance({ concurrency: 50, ratePerSecond: 100, urgentShare: 0 })).toEqual({ concurrency: 50, ratePerSecond: 100 });
  });

  it("starts the next round of projects after the last project served, wrapping round", () => {
    const [a, b, c, d] = ["1", "2", "3", "4"].map((digit) => `${digit.repeat(8)}-0000-0000-0000-000000000000`) as [
      string,
      string,
      string,
      string,
    ];
    expect(nextBulkCursor(firstBulkCursor, [])).toBe(firstBulkCursor);
    expect(nextBulkCursor(firstBulkCursor, [b, a])).toBe(b);
    // From after b: c and d, then round to a.
    expect(nextBulkCursor(b, [c, d, a])).toBe(a);
    expect(nextBulkCursor(b, [d, c])).toBe(d);
  });
});
