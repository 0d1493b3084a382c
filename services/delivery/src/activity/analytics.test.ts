import { DomainError } from "@herald/errors";
import { describe, expect, it } from "vitest";
import { activityTypesOf, bucketRangeOf, dayMs, fillBuckets, hourMs, rateOf, recentWindowOf } from "./analytics.js";

const at = (text: string) => new Date(text);

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return error instanceof DomainError ? error.code : "not a DomainError";
  }
  return undefined;
}

describe("timeseries buckets", () => {
  it("covers every whole UTC bucket that from..to touches, to's included", () => {
    const range = bucketRangeOf({ from: at("2025-03-01T15:20:00Z"), to: at("2025-03-03T00:00:00Z"), interval: "day" }, new Date());
    expect(range).toEqual({ interval: "day", from: at("2025-03-01T00:00:00Z"), to: at("2025-03-04T00:00:00Z"), buckets: 3 });
    const hours = bucketRangeOf({ from: at("2025-03-01T10:59:59Z"), to: at("2025-03-01T12:00:00Z"), interval: "hour" }, new Date());
    expect(hours).toEqual({ interval: "hour", from: at("2025-03-01T10:00:00Z"), to: at("2025-03-01T13:00:00Z"), buckets: 3 });
  });

  it("defaults to 30 days or 24 hours ending with now's bucket", () => {
    const now = at("2025-06-15T08:30:00Z");
    expect(bucketRangeOf({ from: undefined, to: undefined, interval: "day" }, now)).toMatchObject({
      from: at("2025-05-17T00:00:00Z"),
      to: at("2025-06-16T00:00:00Z"),
      buckets: 30,
    });
    expect(bucketRangeOf({ from: undefined, to: undefined, interval: "hour" }, now)).toMatchObject({
      from: at("2025-06-14T09:00:00Z"),
      to: at("2025-06-15T09:00:00Z"),
      buckets: 24,
    });
  });

  it("allows 366 daily and 744 hourly buckets, refuses one more, and refuses from after to", () => {
    const now = new Date();
    const from = at("2024-01-01T00:00:00Z");
    expect(bucketRangeOf({ from, to: new Date(from.getTime() + 365 * dayMs), interval: "day" }, now).buckets).toBe(366);
    expect(codeOf(() => bucketRangeOf({ from, to: new Date(from.getTime() + 366 * dayMs), interval: "day" }, now))).toBe("RANGE_TOO_LARGE");
    expect(bucketRangeOf({ from, to: new Date(from.getTime() + 743 * hourMs), interval: "hour" }, now).buckets).toBe(744);
    expect(codeOf(() => bucketRangeOf({ from, to: new Date(from.getTime() + 744 * hourMs), interval: "hour" }, now))).toBe(
      "RANGE_TOO_LARGE",
    );
    expect(codeOf(() => bucketRangeOf({ from: at("2025-01-02"), to: at("2025-01-01"), interval: "day" }, now))).toBe("INVALID_RANGE");
  });

  it("zero-fills the buckets and puts each count in its series", () => {
    const range = bucketRangeOf({ from: at("2025-03-01"), to: at("2025-03-03"), interval: "day" }, new Date());
    const day = (text: string) => at(text).getTime() / dayMs;
    const buckets = fillBuckets(range, [
      { bucket: day("2025-03-01"), type: "email.sent", count: 4 },
      { bucket: day("2025-03-01"), type: "email.open", count: 2 },
      { bucket: day("2025-03-03"), type: "email.click", count: 1 },
      { bucket: day("2025-03-03"), type: "email.deferred", count: 9 },
      { bucket: day("2025-04-01"), type: "email.sent", count: 9 },
    ]);
    const zero = { sent: 0, delivered: 0, opened: 0, clicked: 0, bounced: 0, complained: 0 };
    expect(buckets).toEqual([
      { ...zero, start: at("2025-03-01"), sent: 4, opened: 2 },
      { ...zero, start: at("2025-03-02") },
      { ...zero, start: at("2025-03-03"), clicked: 1 },
    ]);
  });
});

describe("activity rules", () => {
  it("accepts the nine types in any case and refuses others", () => {
    expect(activityTypesOf([" Email.Open", "email.click", "email.open", ""])).toEqual(["email.open", "email.click"]);
    expect(codeOf(() => activityTypesOf(["email.sent", "email.opened"]))).toBe("INVALID_ACTIVITY_TYPE");
  });

  it("rates are fractions of the sent emails to four decimals, 0 when none was sent", () => {
    expect(rateOf(1, 3)).toBe(0.3333);
    expect(rateOf(5, 0)).toBe(0);
  });

  it("a recent window defaults to 24 hours and lies between a second and 366 days", () => {
    expect(recentWindowOf(0)).toBe(dayMs);
    expect(recentWindowOf(366 * dayMs)).toBe(366 * dayMs);
    expect(codeOf(() => recentWindowOf(366 * dayMs + 1))).toBe("INVALID_WINDOW");
    expect(codeOf(() => recentWindowOf(-1000))).toBe("INVALID_WINDOW");
  });
});
