import { DomainError } from "@herald/errors";
import type { PasswordHasher } from "../domain/password.js";

export interface HashingLimit {
  /** At most this many hashes at once: each holds 128·N·r bytes (128 MiB at the default cost). */
  concurrency: number;
  /** At most this many waiting; past it a request is refused at once rather than queued. */
  maxWaiting: number;
}

const busy = (what: string) =>
  new DomainError("rate-limited", "RATE_LIMIT_EXCEEDED", `Too many ${what} at once; try again in a moment`, {
    details: { retryAfterSeconds: "1" },
  });

/**
 * Runs a hasher's work a few at a time, so that a burst of sign-ins, sign-ups or password
 * resets cannot hold more scrypt memory than `concurrency` hashes. Waiters are bounded too;
 * the queue is a plain array because `maxWaiting` keeps it small.
 */
export function limitHashing(hasher: PasswordHasher, limit: HashingLimit, what = "password checks"): PasswordHasher {
  let running = 0;
  const waiting: Array<() => void> = [];

  async function run<T>(work: () => Promise<T>): Promise<T> {
    if (running >= limit.concurrency) {
      if (waiting.length >= limit.maxWaiting) throw busy(what);
      await new Promise<void>((resolve) => waiting.push(resolve));
    } else {
      running++;
    }
    try {
      return await work();
    } finally {
      // Hand the slot straight to the next waiter, so that `running` never overshoots.
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  }

  return {
    hash: (password) => run(() => hasher.hash(password)),
    verify: (password, stored) => run(() => hasher.verify(password, stored)),
    verifyNothing: (password) => run(() => hasher.verifyNothing(password)),
    needsRehash: (stored) => hasher.needsRehash(stored),
  };
}

/** The two hash queues of the accounts: sign-in's, and the one for new passwords (sign-up and reset). */
export interface HashingQueues {
  signIn: PasswordHasher;
  newPassword: PasswordHasher;
}

/**
 * Sign-in and new passwords wait in separate queues with slots of their own, so that a flood
 * of sign-ups (anyone may post them) fills only its own queue and everyone's sign-in goes on.
 * The memory bound is the sum of both concurrencies.
 */
export function createHashingQueues(hasher: PasswordHasher, limits: { signIn: HashingLimit; newPassword: HashingLimit }): HashingQueues {
  return {
    signIn: limitHashing(hasher, limits.signIn, "sign-ins"),
    newPassword: limitHashing(hasher, limits.newPassword, "sign-ups and password changes"),
  };
}
