import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { generateProjectKeys, hashSecretKey, keyKindOf, secretKeyHintOf } from "./api-keys.js";

describe("project API keys", () => {
  it("are sk_ and pk_ followed by 43 base62 characters (256 bits)", () => {
    const { secretKey, publicKey } = generateProjectKeys();
    expect(secretKey).toMatch(/^sk_[0-9A-Za-z]{43}$/);
    expect(publicKey).toMatch(/^pk_[0-9A-Za-z]{43}$/);
    expect(keyKindOf(secretKey)).toBe("secret");
    expect(keyKindOf(publicKey)).toBe("public");
    expect(keyKindOf("Bearer xyz")).toBeUndefined();
  });

  it("never repeat and use every character about equally often", () => {
    const keys = Array.from({ length: 2_000 }, () => generateProjectKeys().secretKey.slice(3));
    expect(new Set(keys).size).toBe(keys.length);
    const counts = new Map<string, number>();
    for (const char of keys.join("")) counts.set(char, (counts.get(char) ?? 0) + 1);
    expect(counts.size).toBe(62);
    // 86,000 characters over 62 symbols: about 1,387 each; a biased generator lands far outside ±15%.
    const expected = (keys.length * 43) / 62;
    for (const count of counts.values()) expect(Math.abs(count - expected) / expected).toBeLessThan(0.15);
  });

  it("keep only a SHA-256 and a short hint of the secret key", () => {
    const { secretKey } = generateProjectKeys();
    expect(hashSecretKey(secretKey)).toBe(createHash("sha256").update(secretKey).digest("hex"));
    expect(secretKeyHintOf(secretKey)).toBe(`${secretKey.slice(0, 8)}…`);
  });
});
