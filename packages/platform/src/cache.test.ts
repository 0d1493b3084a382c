import { setTimeout as delay } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { createCache, createLoadingCache } from "./cache.js";

/** A cache over a slow lookup that counts its loads. */
function countingCache(options: { ttlMs?: number; max?: number; ttlOf?: (value: string | undefined) => number } = {}) {
  const loads: string[] = [];
  const cache = createLoadingCache<string, string | undefined>({
    max: options.max ?? 100,
    ttlMs: options.ttlMs ?? 60_000,
    ttlOf: options.ttlOf,
    load: async (key) => {
      loads.push(key);
      await delay(20);
      if (key === "broken") throw new Error("lookup failed");
      return key.startsWith("unknown") ? undefined : `value of ${key}`;
    },
  });
  return { cache, loads };
}

describe("createLoadingCache", () => {
  it("loads a key once for concurrent callers, and serves it from memory afterwards", async () => {
    const { cache, loads } = countingCache();
    const answers = await Promise.all([cache.get("a"), cache.get("a"), cache.get("a")]);
    expect(answers).toEqual(["value of a", "value of a", "value of a"]);
    expect(await cache.get("a")).toBe("value of a");
    expect(loads).toEqual(["a"]);
  });

  it("caches undefined as an answer, with a life of its own", async () => {
    const { cache, loads } = countingCache({ ttlOf: (value) => (value === undefined ? 30 : 60_000) });
    expect(await cache.get("unknown-1")).toBeUndefined();
    expect(await cache.get("unknown-1")).toBeUndefined();
    expect(loads).toEqual(["unknown-1"]);
    await delay(50);
    await cache.get("unknown-1");
    expect(loads).toEqual(["unknown-1", "unknown-1"]);
  });

  it("loads again once the time to live has passed", async () => {
    const { cache, loads } = countingCache({ ttlMs: 30 });
    await cache.get("a");
    await delay(50);
    await cache.get("a");
    expect(loads).toEqual(["a", "a"]);
  });

  it("keeps no failed load: every waiting caller gets the error, and the next call loads again", async () => {
    const { cache, loads } = countingCache();
    const results = await Promise.allSettled([cache.get("broken"), cache.get("broken")]);
    expect(results.map((result) => result.status)).toEqual(["rejected", "rejected"]);
    await expect(cache.get("broken")).rejects.toThrow("lookup failed");
    expect(loads).toEqual(["broken", "broken"]);
  });

  it("answers a load that a delete overtook, without keeping its value", async () => {
    const { cache, loads } = countingCache();
    const pending = cache.get("a");
    cache.delete("a");
    expect(await pending).toBe("value of a");
    await cache.get("a");
    expect(loads).toEqual(["a", "a"]);
  });

  it("forgets the entries a predicate picks, and holds no more than max", async () => {
    const { cache, loads } = countingCache({ max: 3 });
    await Promise.all(["p1-a", "p1-b", "p2-a"].map((key) => cache.get(key)));
    cache.deleteWhere((_value, key) => key.startsWith("p1-"));
    expect(cache.size).toBe(1);
    await Promise.all(["p3-a", "p3-b", "p3-c", "p3-d"].map((key) => cache.get(key)));
    expect(cache.size).toBe(3);
    await cache.get("p2-a"); // the least recently used, pushed out
    expect(loads.filter((key) => key === "p2-a")).toHaveLength(2);
  });
});

describe("createCache", () => {
  it("keeps what is set until its time to live has passed on the given clock", () => {
    let now = 0;
    const cache = createCache<string, Set<string>>({ max: 10, ttlMs: 1_000, now: () => now });
    cache.set("p", new Set(["age"]));
    cache.peek("p")?.add("vip");
    expect([...(cache.peek("p") ?? [])]).toEqual(["age", "vip"]);
    now = 1_001;
    expect(cache.peek("p")).toBeUndefined();
  });
});
