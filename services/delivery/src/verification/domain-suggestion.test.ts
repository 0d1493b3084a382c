import { describe, expect, it } from "vitest";
import { isSpecialUseDomain, isUnreachableSpecialUse, suggestDomain } from "./domain-suggestion.js";

describe("the domain a mistyped one was meant to be", () => {
  it("prefers the nearest well-known provider over a swap of the top-level domain", () => {
    expect(suggestDomain("yahoo.cm", false)).toBe("yahoo.com");
    expect(suggestDomain("gmial.com", false)).toBe("gmail.com");
    expect(suggestDomain("hotmial.com", false)).toBe("hotmail.com");
  });

  it("flags a near-miss of a provider even when it takes mail, but no other domain on its top-level domain alone", () => {
    expect(suggestDomain("gmial.com", true)).toBe("gmail.com");
    expect(suggestDomain("company.test", true)).toBeUndefined();
    expect(suggestDomain("acme.cm", true)).toBeUndefined();
    expect(suggestDomain("acme.cm", false)).toBe("acme.co");
  });

  it("never takes a special-use name for a typo, nor suggests one", () => {
    for (const domain of ["company.test", "shop.example", "x.invalid", "mail.localhost", "example.com", "mail.example.org"]) {
      expect(isSpecialUseDomain(domain), domain).toBe(true);
      expect(suggestDomain(domain, false), domain).toBeUndefined();
    }
    expect(isSpecialUseDomain("examples.com")).toBe(false);
    expect(isSpecialUseDomain("testing.de")).toBe(false);
  });

  it("knows which special-use names reach nobody", () => {
    expect(isUnreachableSpecialUse("shop.invalid")).toBe(true);
    expect(isUnreachableSpecialUse("mail.localhost")).toBe(true);
    expect(isUnreachableSpecialUse("company.test")).toBe(false);
    expect(isUnreachableSpecialUse("docs.example")).toBe(false);
  });
});
