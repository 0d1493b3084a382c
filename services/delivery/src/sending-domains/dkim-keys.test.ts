import { createPublicKey, createSign, createVerify, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { decryptPrivateKey, encryptPrivateKey, generateDkimKeyPair, parseEncryptionKey } from "./dkim-keys.js";

describe("DKIM keys", () => {
  it("are fresh 2048-bit RSA pairs whose p= is the DER SPKI", async () => {
    const [first, second] = await Promise.all([generateDkimKeyPair(), generateDkimKeyPair()]);
    expect(first.publicKey).not.toBe(second.publicKey);
    const publicKey = createPublicKey({ key: Buffer.from(first.publicKey, "base64"), format: "der", type: "spki" });
    expect(publicKey.asymmetricKeyType).toBe("rsa");
    expect(publicKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
    const signature = createSign("sha256").update("message").sign(first.privateKeyPem);
    expect(createVerify("sha256").update("message").verify(publicKey, signature)).toBe(true);
  });

  it("are sealed with AES-256-GCM, bound to the domain's id", async () => {
    const key = randomBytes(32);
    const { privateKeyPem } = await generateDkimKeyPair();
    const sealed = encryptPrivateKey(key, privateKeyPem, "domain-1");
    expect(sealed).not.toContain("PRIVATE KEY");
    expect(sealed).not.toBe(encryptPrivateKey(key, privateKeyPem, "domain-1"));
    expect(decryptPrivateKey(key, sealed, "domain-1")).toBe(privateKeyPem);
    expect(() => decryptPrivateKey(key, sealed, "domain-2")).toThrow();
    expect(() => decryptPrivateKey(randomBytes(32), sealed, "domain-1")).toThrow();
  });

  it("reads the encryption key as 64 hex digits or base64 of 32 bytes", () => {
    const key = randomBytes(32);
    expect(parseEncryptionKey(key.toString("hex"))).toEqual(key);
    expect(parseEncryptionKey(key.toString("base64"))).toEqual(key);
    expect(parseEncryptionKey("too short")).toBeUndefined();
  });
});
