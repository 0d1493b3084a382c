import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalInstant, instantAt, isIsoDate, windowStart } from "./dates.js";
import { dateLikeString } from "./testing/date-strings.js";

/** The rule stated another way, as an oracle for the pattern: the parts must survive a Date.UTC round trip. */
function survivesDateRoundTrip(value: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value) ?? /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{3})?Z$/.exec(value);
  if (!match) return false;
  const [, year, month, day, hour = "0", minute = "0", second = "0"] = match;
  const parts = [year, month, day, hour, minute, second].map(Number) as [number, number, number, number, number, number];
  const date = new Date(Date.UTC(parts[0], parts[1] - 1, parts[2], parts[3], parts[4], parts[5]));
  return (
    date.getUTCFullYear() === parts[0] &&
    date.getUTCMonth() === parts[1] - 1 &&
    date.getUTCDate() === parts[2] &&
    date.getUTCHours() === parts[3] &&
    date.getUTCMinutes() === parts[4] &&
    date.getUTCSeconds() === parts[5]
  );
}

describe("isIsoDate", () => {
  it("accepts exactly the strings whose parts survive a Date.UTC round trip", () => {
    fc.assert(
      fc.property(dateLikeString, (value) => {
        expect(isIsoDate(value)).toBe(survivesDateRoundTrip(value));
      }),
      { numRuns: 5000 },
    );
  });

  it.each([
    ["2024-02-29", true],
    ["2023-02-29", false],
    ["2100-02-29", false],
    ["2000-02-29T23:59:59.999Z", true],
    ["2024-02-30T00:00:00Z", false],
    ["9999-99-99", false],
    ["2024-01-01T24:00:00Z", false],
    ["2024-01-01T10:00:00+00:00", false],
    ["0099-12-31", false],
    ["0100-01-01", true],
  ])("%s → %s", (value, expected) => {
    expect(isIsoDate(value)).toBe(expected);
  });
});

describe("canonicalInstant", () => {
  it("writes every form of one instant alike, and gives date-only values no instant where a time is needed", () => {
    expect(canonicalInstant("2024-03-01", false)).toBe("2024-03-01T00:00:00.000Z");
    expect(canonicalInstant("2024-03-01T10:20:30Z", false)).toBe("2024-03-01T10:20:30.000Z");
    expect(canonicalInstant("2024-03-01T10:20:30.456Z", true)).toBe("2024-03-01T10:20:30.456Z");
    expect(canonicalInstant("2024-03-01", true)).toBeUndefined();
  });

  it("orders as the instants do", () => {
    fc.assert(
      fc.property(
        fc.date({ noInvalidDate: true, min: new Date("0100-01-01"), max: new Date("9999-12-31") }),
        fc.date({ noInvalidDate: true }),
        (a, b) => {
          const [left, right] = [canonicalInstant(a.toISOString(), true), canonicalInstant(b.toISOString(), true)];
          if (left === undefined || right === undefined) return;
          expect(left < right).toBe(a.getTime() < b.getTime());
        },
      ),
    );
  });
});

describe("windows", () => {
  const now = new Date("2024-06-15T12:00:00.000Z");

  it("count back a fixed length per unit", () => {
    expect(windowStart(now, 1.5, "days").iso).toBe("2024-06-14T00:00:00.000Z");
    expect(windowStart(now, 2, "weeks").iso).toBe("2024-06-01T12:00:00.000Z");
    expect(windowStart(now, 90, "minutes").iso).toBe("2024-06-15T10:30:00.000Z");
  });

  it("stop at the year 0100, before which no stored date lies", () => {
    expect(windowStart(now, 1e9, "weeks").iso).toBe("0100-01-01T00:00:00.000Z");
    expect(() => instantAt(Number.NaN)).toThrow(RangeError);
  });
});
