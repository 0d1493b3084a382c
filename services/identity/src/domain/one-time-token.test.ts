import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createOneTimeToken, hashToken, oneTimeTokenTtlMs } from "./one-time-token.js";

describe("one-time tokens", () => {
  it("are 32 random bytes in base64url, stored as their SHA-256, valid for one hour", () => {
    const now = new Date("2026-11-22T10:00:00Z");
    const { token, tokenHash, expiresAt } = createOneTimeToken(now);
    expect(Buffer.from(token, "base64url")).toHaveLength(32);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(tokenHash).toBe(createHash("sha256").update(token).digest("hex"));
    expect(hashToken(token)).toBe(tokenHash);
    expect(expiresAt.getTime() - now.getTime()).toBe(oneTimeTokenTtlMs);
    expect(oneTimeTokenTtlMs).toBe(3_600_000);
    expect(createOneTimeToken(now).token).not.toBe(token);
  });
});
