import { setTimeout as delay } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { createBackgroundLoop, type PassOutcome } from "./background-loop.js";
import { createLogger } from "./logger.js";

const logger = createLogger({ name: "background-loop-test", level: "silent" });

/** A loop whose passes are counted, answering from `outcomes` in turn (then "idle"). */
function countingLoop(options: {
  idleMs: number;
  outcomes?: Array<PassOutcome | Error>;
  minIntervalMs?: number;
  isFatal?: (e: unknown) => boolean;
}) {
  const outcomes = [...(options.outcomes ?? [])];
  const passes: number[] = [];
  const loop = createBackgroundLoop({
    name: "test loop",
    logger,
    idleMs: options.idleMs,
    jitter: 0,
    minIntervalMs: options.minIntervalMs,
    isFatal: options.isFatal,
    pass: () => {
      passes.push(performance.now());
      const next = outcomes.shift() ?? "idle";
      if (next instanceof Error) throw next;
      return next;
    },
  });
  return { loop, passes };
}

describe("createBackgroundLoop", () => {
  it("runs a pass at start, then sleeps while idle until a nudge wakes it", async () => {
    const { loop, passes } = countingLoop({ idleMs: 60_000 });
    loop.start();
    await delay(20);
    expect(passes).toHaveLength(1);
    loop.nudge();
    await delay(20);
    expect(passes).toHaveLength(2);
    await loop.stop();
  });

  it("runs again at once while a pass says more work waits", async () => {
    const { loop, passes } = countingLoop({ idleMs: 60_000, outcomes: ["busy", "busy", "busy"] });
    loop.start();
    await delay(30);
    expect(passes).toHaveLength(4);
    await loop.stop();
  });

  it("sleeps the number of milliseconds a pass asks for, and a nudge cuts it short", async () => {
    const { loop, passes } = countingLoop({ idleMs: 60_000, outcomes: [60_000] });
    loop.start();
    await delay(20);
    expect(passes).toHaveLength(1);
    loop.nudge();
    await delay(20);
    expect(passes).toHaveLength(2);
    await loop.stop();
  });

  it("backs off after failures, deaf to nudges, and resets once a pass succeeds", async () => {
    const { loop, passes } = countingLoop({ idleMs: 40, outcomes: [new Error("down"), new Error("down"), "idle"] });
    loop.start();
    await delay(10);
    expect(loop.failures).toBe(1);
    loop.nudge(); // does not cut the 40 ms backoff short
    await delay(10);
    expect(passes).toHaveLength(1);
    await delay(200); // 40 ms, then 80 ms
    expect(passes.length).toBeGreaterThanOrEqual(3);
    expect(loop.failures).toBe(0);
    const [first = 0, second = 0, third = 0] = passes;
    expect(second - first).toBeGreaterThanOrEqual(35);
    expect(third - second).toBeGreaterThanOrEqual(75);
    await loop.stop();
  });

  it("while nudges keep coming, starts passes no more often than minIntervalMs", async () => {
    const { loop, passes } = countingLoop({ idleMs: 60_000, minIntervalMs: 50 });
    loop.start();
    const until = performance.now() + 240;
    while (performance.now() < until) {
      loop.nudge();
      await delay(5);
    }
    await loop.stop();
    // 240 ms of nudges every 5 ms: about 5 passes, not about 48.
    expect(passes.length).toBeLessThanOrEqual(7);
    for (let i = 1; i < passes.length; i++) expect((passes[i] ?? 0) - (passes[i - 1] ?? 0)).toBeGreaterThanOrEqual(45);
  });

  it("stop() aborts the signal and waits for the pass under way", async () => {
    let finishedPass = false;
    let sawAbort = false;
    const loop = createBackgroundLoop({
      name: "draining loop",
      logger,
      idleMs: 10,
      pass: async (signal) => {
        await delay(50);
        sawAbort = signal.aborted;
        finishedPass = true;
        return "busy" as const;
      },
    });
    loop.start();
    await delay(10);
    await loop.stop();
    expect(finishedPass).toBe(true);
    expect(sawAbort).toBe(true);
    await expect(loop.finished).resolves.toBeUndefined();
  });

  it("ends after a pass that says done, and rejects finished on a fatal failure", async () => {
    const done = countingLoop({ idleMs: 10, outcomes: [new Error("not yet"), "done"] });
    done.loop.start();
    await expect(done.loop.finished).resolves.toBeUndefined();
    expect(done.passes).toHaveLength(2);

    const fatal = countingLoop({ idleMs: 10, outcomes: [new Error("bad config")], isFatal: () => true });
    fatal.loop.start();
    await expect(fatal.loop.finished).rejects.toThrow("bad config");
    await fatal.loop.stop();
  });
});
