import { describe, expect, it, vi } from "vitest";
import { createThrottledNudge } from "./outbox-nudge.js";

describe("the throttled outbox nudge", () => {
  it("nudges at once when idle and coalesces a burst into one trailing nudge", () => {
    vi.useFakeTimers();
    try {
      const nudge = vi.fn();
      const throttled = createThrottledNudge(nudge, 50, () => Date.now());
      throttled();
      expect(nudge).toHaveBeenCalledTimes(1);
      for (let index = 0; index < 100; index++) throttled();
      expect(nudge).toHaveBeenCalledTimes(1);
      vi.advanceTimersByTime(50);
      expect(nudge).toHaveBeenCalledTimes(2);
      vi.advanceTimersByTime(500);
      expect(nudge).toHaveBeenCalledTimes(2);
      throttled();
      expect(nudge).toHaveBeenCalledTimes(3);
    } finally {
      vi.useRealTimers();
    }
  });
});
