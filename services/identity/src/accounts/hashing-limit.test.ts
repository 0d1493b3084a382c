import { describe, expect, it } from "vitest";
import type { PasswordHasher } from "../domain/password.js";
import { createHashingQueues, limitHashing } from "./hashing-limit.js";

/** A hasher that counts how many of its calls run at once and finishes when told to. */
function observedHasher() {
  let active = 0;
  let most = 0;
  const releases: Array<() => void> = [];
  const work = async () => {
    active++;
    most = Math.max(most, active);
    await new Promise<void>((resolve) => releases.push(resolve));
    active--;
  };
  const hasher: PasswordHasher = {
    hash: async () => {
      await work();
      return "scrypt$x";
    },
    verify: async () => {
      await work();
      return true;
    },
    verifyNothing: work,
    needsRehash: () => false,
  };
  return {
    hasher,
    most: () => most,
    active: () => active,
    releaseAll: () => {
      for (const release of releases.splice(0)) release();
    },
  };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("the password hashing limit", () => {
  it("runs at most `concurrency` hashes at once and refuses past `maxWaiting` waiters", async () => {
    const observed = observedHasher();
    const limited = limitHashing(observed.hasher, { concurrency: 2, maxWaiting: 3 });
    const calls = Array.from({ length: 5 }, (_, i) => (i % 2 ? limited.verify("pw", "stored") : limited.hash("pw")));
    await expect(limited.verifyNothing("pw")).rejects.toMatchObject({ code: "RATE_LIMIT_EXCEEDED", kind: "rate-limited" });
    await settle();
    expect(observed.active()).toBe(2);
    while (observed.active() > 0) {
      observed.releaseAll();
      await settle();
    }
    await Promise.all(calls);
    expect(observed.most()).toBe(2);
    // The slots are free again.
    const again = limited.hash("pw");
    await settle();
    observed.releaseAll();
    await expect(again).resolves.toBe("scrypt$x");
  });
});

describe("the sign-in and new-password hash queues", () => {
  it("keep sign-in going while a flood of sign-ups has filled its own queue", async () => {
    const observed = observedHasher();
    const queues = createHashingQueues(observed.hasher, {
      signIn: { concurrency: 1, maxWaiting: 0 },
      newPassword: { concurrency: 1, maxWaiting: 1 },
    });
    const signUps = [queues.newPassword.hash("pw"), queues.newPassword.hash("pw")];
    await expect(queues.newPassword.hash("pw")).rejects.toMatchObject({ code: "RATE_LIMIT_EXCEEDED" });
    await settle();
    // The sign-up queue is full and its slot busy; a sign-in still gets a slot of its own at once.
    const signIn = queues.signIn.verify("pw", "stored");
    await settle();
    expect(observed.active()).toBe(2);
    while (observed.active() > 0) {
      observed.releaseAll();
      await settle();
    }
    await expect(signIn).resolves.toBe(true);
    await Promise.all(signUps);
  });
});
