import { describe, expect, it } from "vitest";
import { parseDomainName } from "./domain-name.js";

describe("parseDomainName", () => {
  it.each([
    ["example.com", "example.com"],
    ["  Mail.Example.COM. ", "mail.example.com"],
    ["a-b.example.co.uk", "a-b.example.co.uk"],
    ["xn--bcher-kva.example", "xn--bcher-kva.example"],
    ["bücher.example", "xn--bcher-kva.example"],
    [`${"a".repeat(63)}.com`, `${"a".repeat(63)}.com`],
  ])("accepts %j as %j", (input, domain) => {
    expect(parseDomainName(input)).toEqual({ ok: true, domain });
  });

  it.each([
    "",
    "example",
    "https://example.com",
    "example.com/path",
    "example.com:25",
    "user@example.com",
    "*.example.com",
    "exa mple.com",
    "a..example.com",
    ".example.com",
    "-a.example.com",
    "a-.example.com",
    "under_score.example.com",
    `${"a".repeat(64)}.com`,
    `${Array.from({ length: 5 }, () => "a".repeat(63)).join(".")}.com`,
    "192.168.0.1",
  ])("refuses %j", (input) => {
    expect(parseDomainName(input).ok).toBe(false);
  });

  it("counts the total length in ASCII: 253 passes, 254 does not", () => {
    const of = (length: number) => `${Array.from({ length: 3 }, () => "a".repeat(63)).join(".")}.${"b".repeat(length - 3 * 64)}`;
    expect(of(253)).toHaveLength(253);
    expect(parseDomainName(of(253)).ok).toBe(true);
    expect(parseDomainName(of(254)).ok).toBe(false);
  });
});
