import { createHash } from "node:crypto";
import type { Redis, Result } from "ioredis";
import { HttpProblem } from "../http/errors.js";

/** A sign-in attempt that holds its place in the backoff while the password is checked. */
export interface LoginAttempt {
  /** The password was right: the account's count starts again, and the address's place is given back. */
  succeeded(): Promise<void>;
  /** The attempt ended without a verdict on the password (unverified address, identity busy or away): both places are given back. */
  released(): Promise<void>;
}

export interface LoginBackoff {
  /**
   * Counts the attempt as a failure before the password is hashed, in one step with the check of
   * the wait, so that parallel attempts cannot all pass the check: throws 429 while the account or
   * the client address is waiting out its backoff.
   */
  reserve(email: string, ip: string): Promise<LoginAttempt>;
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
 * KEYS: the account's failures and wait, the address's failures and wait.
 * ARGV: the account's and the address's free failures, the base and longest wait, the memory.
 * Answers { seconds left to wait (0: go on), whether the account's wait was set, whether the address's was }.
 */
const reserveScript = `
local wait = math.max(redis.call('TTL', KEYS[2]), redis.call('TTL', KEYS[4]))
if wait > 0 then return {wait, 0, 0} end
local function count(failuresKey, waitKey, free)
  local failures = redis.call('INCR', failuresKey)
  redis.call('EXPIRE', failuresKey, ARGV[5])
  if failures <= free then return 0 end
  local delay = math.min(tonumber(ARGV[3]) * 2 ^ math.min(failures - free - 1, 30), tonumber(ARGV[4]))
  redis.call('SET', waitKey, '1', 'EX', math.floor(delay))
  return 1
end
return {0, count(KEYS[1], KEYS[2], tonumber(ARGV[1])), count(KEYS[3], KEYS[4], tonumber(ARGV[2]))}
`;

/**
 * KEYS: a failures key and its wait, as many pairs as given back.
 * ARGV: per pair, "1" when this attempt's reservation set the wait (so it goes too).
 */
const releaseScript = `
for i = 1, #KEYS, 2 do
  if redis.call('GET', KEYS[i]) then redis.call('DECR', KEYS[i]) end
  if ARGV[(i + 1) / 2] == '1' then redis.call('DEL', KEYS[i + 1]) end
end
return 0
`;

declare module "ioredis" {
  interface RedisCommander<Context> {
    heraldLoginReserve(...keysAndArgs: (string | number)[]): Result<[number, number, number], Context>;
    heraldLoginRelease(...keysAndArgs: (string | number)[]): Result<number, Context>;
  }
}

const waiting = (seconds: number) =>
  new HttpProblem({
    statusCode: 429,
    code: "RATE_LIMIT_EXCEEDED",
    message: `Too many failed sign-ins; try again in ${seconds} s`,
    details: { retryAfterSeconds: seconds },
    suggestion: "Wait before trying again, or reset your password",
  });

/** Without Redis, sign-in goes on unthrottled, as the rate limit does. */
const unthrottled: LoginAttempt = { succeeded: async () => {}, released: async () => {} };

/**
 * Exponential backoff on password sign-in, per account and per client address, in Redis so
 * that every replica shares it. Accounts are keyed by the SHA-256 of the address as sent
 * (lower-cased), whether or not an account has it, so the 429 reveals nothing.
 *
 * Each attempt is counted as a failure when it is reserved, before identity hashes anything,
 * and the wait it earns is set in the same script: of any number of parallel attempts past the
 * free ones, one reaches the hash and the others wait. A right password gives the account a
 * clean slate; an attempt without a verdict gives its places back.
 */
export function createLoginBackoff(options: LoginBackoffOptions): LoginBackoff {
  const { redis } = options;
  redis.defineCommand("heraldLoginReserve", { numberOfKeys: 4, lua: reserveScript });
  redis.defineCommand("heraldLoginRelease", { lua: releaseScript });
  const accountKey = (email: string) => `${prefix}account:${createHash("sha256").update(email.trim().toLowerCase()).digest("hex")}`;
  const ipKey = (ip: string) => `${prefix}ip:${ip}`;

  return {
    async reserve(email, ip) {
      const account = accountKey(email);
      const address = ipKey(ip);
      let answer: [number, number, number];
      try {
        answer = await redis.heraldLoginReserve(
          `${account}:failures`,
          `${account}:wait`,
          `${address}:failures`,
          `${address}:wait`,
          options.freeFailuresPerAccount,
          options.freeFailuresPerIp,
          options.baseDelaySeconds,
          options.maxDelaySeconds,
          memorySeconds,
        );
      } catch {
        return unthrottled;
      }
      const [wait, accountWaitSet, addressWaitSet] = answer;
      if (wait > 0) throw waiting(wait);
      const giveBack = (pairs: [string, number][]) =>
        redis
          .heraldLoginRelease(
            pairs.length * 2,
            ...pairs.flatMap(([key]) => [`${key}:failures`, `${key}:wait`]),
            ...pairs.map(([, waitSet]) => (waitSet === 1 ? "1" : "0")),
          )
          .then(() => undefined)
          .catch(() => undefined);
      return {
        async succeeded() {
          await Promise.all([redis.del(`${account}:failures`, `${account}:wait`), giveBack([[address, addressWaitSet]])]).catch(
            () => undefined,
          );
        },
        released: () =>
          giveBack([
            [account, accountWaitSet],
            [address, addressWaitSet],
          ]),
      };
    },
  };
}
