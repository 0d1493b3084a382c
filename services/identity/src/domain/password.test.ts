import { describe, expect, it } from "vitest";
import { createPasswordHasher, passwordViolation } from "./password.js";

describe("password hashing", () => {
  const hasher = createPasswordHasher({ logN: 14 });

  it("stores scrypt with its parameters and a fresh salt, and verifies only the right password", async () => {
    const stored = await hasher.hash("correct horse battery");
    expect(stored).toMatch(/^scrypt\$14\$8\$1\$[A-Za-z0-9+/=]{24}\$[A-Za-z0-9+/=]{44}$/);
    expect(stored).not.toContain("correct horse");
    expect(await hasher.hash("correct horse battery")).not.toBe(stored);
    expect(await hasher.verify("correct horse battery", stored)).toBe(true);
    expect(await hasher.verify("correct horse batterY", stored)).toBe(false);
    expect(await hasher.verify("", stored)).toBe(false);
  });

  it("verifies with the parameters stored in the hash, so a raised cost still reads old hashes", async () => {
    const old = await hasher.hash("s3cret-passphrase");
    const stronger = createPasswordHasher({ logN: 15 });
    expect(await stronger.verify("s3cret-passphrase", old)).toBe(true);
    expect(stronger.needsRehash(old)).toBe(true);
    expect(hasher.needsRehash(old)).toBe(false);
  });

  it("rejects a tampered or foreign hash instead of throwing", async () => {
    const stored = await hasher.hash("s3cret-passphrase");
    const parts = stored.split("$");
    parts[5] = Buffer.alloc(32, 1).toString("base64");
    expect(await hasher.verify("s3cret-passphrase", parts.join("$"))).toBe(false);
    expect(await hasher.verify("s3cret-passphrase", "$2b$10$bcryptlooking")).toBe(false);
  });

  it("spends about the time of a real check when there is nothing to check", async () => {
    const stored = await hasher.hash("s3cret-passphrase");
    await hasher.verifyNothing("warm-up");
    const time = async (fn: () => Promise<unknown>) => {
      const started = performance.now();
      await fn();
      return performance.now() - started;
    };
    const real = await time(() => hasher.verify("wrong-passphrase", stored));
    const decoy = await time(() => hasher.verifyNothing("wrong-passphrase"));
    expect(decoy).toBeGreaterThan(real * 0.3);
  });

  it("asks for 8 to 256 characters", () => {
    expect(passwordViolation("short")?.code).toBe("password_too_short");
    expect(passwordViolation("x".repeat(257))?.code).toBe("password_too_long");
    expect(passwordViolation("eight ch")).toBeUndefined();
  });
});
