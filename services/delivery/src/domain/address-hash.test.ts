import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createAddressHash } from "./address-hash.js";

describe("the keyed hash of a suppressed address", () => {
  const hashOf = createAddressHash("a test secret of at least thirty-two characters");

  it("is the same for the same address however it is written, and differs between addresses and between keys", () => {
    expect(hashOf(" Ada@Example.COM ")).toEqual(hashOf("ada@example.com"));
    expect(hashOf("ada@example.com")).toHaveLength(32);
    expect(hashOf("ada@example.com")).not.toEqual(hashOf("bob@example.com"));
    expect(createAddressHash("another secret of at least thirty-two characters")("ada@example.com")).not.toEqual(hashOf("ada@example.com"));
  });

  it("is the hash suppressions were stored with: one of an earlier version still matches", () => {
    expect(hashOf("ada@example.com").toString("hex")).toBe("3fb2e233dbe1e0bb0537dfacb1d568b41924589979fbf56579f4e1a1f9cfc90b");
  });

  it("does not contain the address, nor is it the address's plain SHA-256", () => {
    const hash = hashOf("ada@example.com");
    expect(hash.includes(Buffer.from("ada@example.com"))).toBe(false);
    expect(hash).not.toEqual(createHash("sha256").update("ada@example.com").digest());
  });
});
