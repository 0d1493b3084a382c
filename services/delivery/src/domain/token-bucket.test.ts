import { describe, expect, it } from "vitest";
import { retryDelayMs } from "./send-retry.js";
import { createKeyedTokenBuckets, createTokenBucket } from "./token-bucket.js";

describe("token bucket", () => {
  it("grants a burst, then tokens at its rate, and takes back refunds up to the burst", () => {
    let now = 0;
    const bucket = createTokenBucket({ ratePerSecond: 10, now: () => now });
    expect(bucket.take(25)).toBe(10);
    expect(bucket.take(1)).toBe(0);
    expect(bucket.msUntilNext()).toBe(100);
    now += 250;
    expect(bucket.take(5)).toBe(2);
    bucket.refund(100);
    expect(bucket.take(100)).toBe(10);
    now += 10_000;
    expect(bucket.take(100)).toBe(10);
  });

  it("keeps one bucket per project", () => {
    const now = 0;
    const buckets = createKeyedTokenBuckets({ ratePerSecond: 2, now: () => now });
    expect(buckets.bucket("a").take(5)).toBe(2);
    expect(buckets.bucket("a").take(1)).toBe(0);
    expect(buckets.bucket("b").take(5)).toBe(2);
  });
});

describe("retry delay", () => {
  const policy = { maxAttempts: 8, baseDelayMs: 1_000, maxDelayMs: 60_000 };

  it("doubles after each failed attempt, up to the cap, jittered between half and all of it", () => {
    expect(retryDelayMs(policy, 1, () => 0)).toBe(500);
    expect(retryDelayMs(policy, 1, () => 1)).toBe(1_000);
    expect(retryDelayMs(policy, 3, () => 1)).toBe(4_000);
    expect(retryDelayMs(policy, 3, () => 0.5)).toBe(3_000);
    expect(retryDelayMs(policy, 20, () => 1)).toBe(60_000);
    expect(retryDelayMs(policy, 20, () => 0)).toBe(30_000);
  });
});
