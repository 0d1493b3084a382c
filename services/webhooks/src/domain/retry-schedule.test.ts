import { describe, expect, it } from "vitest";
import { nextAttemptAfter } from "./retry-schedule.js";

describe("nextAttemptAfter", () => {
  const schedule = [0, 5_000, 300_000];

  it("waits the nth entry before attempt n, within ±10 %", () => {
    expect(nextAttemptAfter(schedule, 1, 1_000, () => 0)?.getTime()).toBe(1_000 + 4_500);
    expect(nextAttemptAfter(schedule, 1, 1_000, () => 1)?.getTime()).toBe(1_000 + 5_500);
    expect(nextAttemptAfter(schedule, 2, 0, () => 0.5)?.getTime()).toBe(300_000);
  });

  it("answers undefined once the schedule is spent", () => {
    expect(nextAttemptAfter(schedule, 3, 0)).toBeUndefined();
    expect(nextAttemptAfter([0], 1, 0)).toBeUndefined();
  });
});
