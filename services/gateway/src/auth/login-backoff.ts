import { createHash } from "node:crypto";
import type { Redis } from "ioredis";
import { HttpProblem } from "../http/errors.js";

export interface LoginBackoff {
  /** Throws 429 while the address or the client is waiting out its backoff; nothing is hashed meanwhile. */
  check(email: string, ip: string): Promise<void>;
  /** A wrong password: the next attempt waits twice as long as the last, past the free attempts. */
  failed(email: string, ip: string): Promise<void>;
  /** A sign-in: the account's count starts again (the client's does not, so one good account cannot clear it). */
  succeeded(email: string): Promise<void>;
}

export interface LoginBackoffOptions {
  redis: Redis;
  /** Failures per account, and per client address, before the first wait. */
  freeFailuresPerAccount: number;
  freeFailuresPerIp: number;
  /** The first wait; each further failure doubles it, up to maxDelaySeconds. */
  baseDelaySeconds: number;
  maxDelaySeconds: number;
}

/** How long failures are remembered after the last one. */
const memorySeconds = 3600;
const prefix = "herald:login:";

/**
 * Exponential backoff on password sign-in, per account and per client address, in Redis so
 * that every replica shares it. Accounts are keyed by the SHA-256 of the address as sent
 * (lower-cased), whether or not an account has it, so the 429 reveals nothing.
 */
export function createLoginBackoff(options: LoginBackoffOptions): LoginBackoff {
  const { redis } = options;
  const accountKey = (email: string) => `${prefix}account:${createHash("sha256").update(email.trim().toLowerCase()).digest("hex")}`;
  const ipKey = (ip: string) => `${prefix}ip:${ip}`;

  async function fail(key: string, free: number): Promise<void> {
    const results = await redis.multi().incr(`${key}:failures`).expire(`${key}:failures`, memorySeconds).exec();
    const failures = Number(results?.[0]?.[1] ?? 0);
    if (failures <= free) return;
    const delay = Math.min(options.baseDelaySeconds * 2 ** Math.min(failures - free - 1, 30), options.maxDelaySeconds);
    await redis.set(`${key}:wait`, "1", "EX", delay);
  }

  return {
    async check(email, ip) {
      // Without Redis, sign-in goes on unthrottled, as the rate limit does.
      const [account, client] = await Promise.all([redis.ttl(`${accountKey(email)}:wait`), redis.ttl(`${ipKey(ip)}:wait`)]).catch(() => [
        0, 0,
      ]);
      const wait = Math.max(account, client);
      if (wait <= 0) return;
      throw new HttpProblem({
        statusCode: 429,
        code: "RATE_LIMIT_EXCEEDED",
        message: `Too many failed sign-ins; try again in ${wait} s`,
        details: { retryAfterSeconds: wait },
        suggestion: "Wait before trying again, or reset your password",
      });
    },
    async failed(email, ip) {
      await Promise.all([fail(accountKey(email), options.freeFailuresPerAccount), fail(ipKey(ip), options.freeFailuresPerIp)]).catch(
        () => undefined,
      );
    },
    async succeeded(email) {
      const key = accountKey(email);
      await redis.del(`${key}:failures`, `${key}:wait`).catch(() => undefined);
    },
  };
}
