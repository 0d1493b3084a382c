import { createHash } from "node:crypto";
import { DomainError } from "@herald/errors";
import type { Redis } from "ioredis";
import type { TokenPurpose } from "../domain/one-time-token.js";

export interface AuthEmailLimiter {
  /** Counts one request for the address and purpose; throws RATE_LIMIT_EXCEEDED past the hourly limit. */
  take(purpose: TokenPurpose, email: string): Promise<void>;
}

const windowSeconds = 3600;

/**
 * A fixed one-hour window per purpose and address in Redis, shared by every
 * replica. It counts before anything is looked up, so an address with no account
 * is limited exactly like one with an account and the limit reveals nothing.
 */
export function createAuthEmailLimiter(deps: { redis: Redis; limitPerHour: number }): AuthEmailLimiter {
  return {
    async take(purpose, email) {
      // The address is hashed so that Redis holds no list of addresses.
      const key = `identity:auth-email:${purpose}:${createHash("sha256").update(email).digest("hex")}`;
      const results = await deps.redis.multi().set(key, 0, "EX", windowSeconds, "NX").incr(key).ttl(key).exec();
      const count = Number(results?.[1]?.[1] ?? 0);
      if (count <= deps.limitPerHour) return;
      const retryAfter = Math.max(1, Number(results?.[2]?.[1] ?? windowSeconds));
      throw new DomainError("rate-limited", "RATE_LIMIT_EXCEEDED", "Too many emails requested for this address; try again later", {
        details: { retryAfterSeconds: String(retryAfter) },
        suggestion: `Wait ${Math.ceil(retryAfter / 60)} minutes before asking again`,
      });
    },
  };
}
