import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createReturnPaths } from "./return-path.js";

describe("VERP return paths", () => {
  const returnPaths = createReturnPaths({ domain: "Bounces.Herald.Test", secret: "a link signing secret of 32 characters or more" });

  it("names the email it was made for, however the receiver cases it, and nothing else", () => {
    const emailId = randomUUID();
    const address = returnPaths.addressOf(emailId);
    expect(address).toMatch(/^bounce\+[0-9a-f]{32}-[0-9a-f]{16}@bounces\.herald\.test$/);
    expect(returnPaths.emailIdOf(address)).toBe(emailId);
    expect(returnPaths.emailIdOf(address.toUpperCase())).toBe(emailId);
    expect(returnPaths.emailIdOf(` ${address} `)).toBe(emailId);
    expect(returnPaths.feedbackAddress).toBe("fbl@bounces.herald.test");
    expect(returnPaths.emailIdOf(returnPaths.feedbackAddress)).toBeUndefined();
  });

  it("reads a return path an earlier version made with the same secret", () => {
    const emailId = "01234567-89ab-cdef-0123-456789abcdef";
    expect(returnPaths.addressOf(emailId)).toBe("bounce+0123456789abcdef0123456789abcdef-9e64252735828d76@bounces.herald.test");
    expect(returnPaths.emailIdOf("bounce+0123456789abcdef0123456789abcdef-9e64252735828d76@bounces.herald.test")).toBe(emailId);
  });

  it("refuses a forged tag, another email's tag, another domain and other mailboxes", () => {
    const address = returnPaths.addressOf(randomUUID());
    const [local = "", domain] = address.split("@");
    const forged = `${local.slice(0, -1)}${local.endsWith("0") ? "1" : "0"}@${domain}`;
    expect(returnPaths.emailIdOf(forged)).toBeUndefined();
    const otherTag = returnPaths.addressOf(randomUUID()).split("-").at(-1);
    expect(returnPaths.emailIdOf(`${local.split("-")[0]}-${otherTag}`)).toBeUndefined();
    expect(returnPaths.emailIdOf(`${local}@elsewhere.test`)).toBeUndefined();
    expect(returnPaths.emailIdOf(`postmaster@${domain}`)).toBeUndefined();
    expect(returnPaths.emailIdOf(`${local.slice(0, 20)}@${domain}`)).toBeUndefined();
    // Another secret makes other tags: a deployment cannot vouch for another's return paths.
    const other = createReturnPaths({ domain: "bounces.herald.test", secret: "another link signing secret, 32 characters" });
    expect(other.emailIdOf(address)).toBeUndefined();
  });
});
