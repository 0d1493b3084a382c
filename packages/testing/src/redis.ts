import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";

/** A client whose keys live under a prefix of their own, removed by cleanup(). */
export function createTestRedis(redisUrl: string): { redis: Redis; prefix: string; cleanup(): Promise<void> } {
  const prefix = `test:${randomUUID()}:`;
  const redis = new Redis(redisUrl, { keyPrefix: prefix, lazyConnect: false, maxRetriesPerRequest: 2 });
  return {
    redis,
    prefix,
    async cleanup() {
      // keyPrefix is not applied to SCAN patterns, so remove it before DEL re-adds it.
      let cursor = "0";
      do {
        const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 500);
        cursor = next;
        if (keys.length > 0) await redis.del(...keys.map((key) => key.slice(prefix.length)));
      } while (cursor !== "0");
      redis.disconnect();
    },
  };
}
