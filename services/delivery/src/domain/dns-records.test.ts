import { describe, expect, it } from "vitest";
import { type DnsRecord, expectedRecords, recordStatusOf } from "./dns-records.js";

const facts = { domain: "example.com", selector: "herald-1", publicKey: "MIIBIjANBg" };
const [dkim, spf, dmarc] = expectedRecords(facts) as [DnsRecord, DnsRecord, DnsRecord];
const found = (...records: string[]) => ({ kind: "records" as const, records });

describe("expected records", () => {
  it("names DKIM (required), SPF and DMARC (recommended)", () => {
    expect(expectedRecords(facts)).toEqual([
      { purpose: "dkim", type: "TXT", name: "herald-1._domainkey.example.com", value: "v=DKIM1; k=rsa; p=MIIBIjANBg", required: true },
      { purpose: "spf", type: "TXT", name: "example.com", value: "v=spf1 a mx ~all", required: false },
      { purpose: "dmarc", type: "TXT", name: "_dmarc.example.com", value: "v=DMARC1; p=none;", required: false },
    ]);
    expect(expectedRecords(facts, { spfInclude: "amazonses.com" })[1]?.value).toBe("v=spf1 include:amazonses.com ~all");
  });
});

describe("record status", () => {
  it("DKIM is verified only by the exact value", () => {
    expect(recordStatusOf(dkim, found("v=DKIM1; k=rsa; p=MIIBIjANBg"))).toBe("verified");
    expect(recordStatusOf(dkim, found("v=DKIM1; k=rsa; p=OTHER"))).toBe("failed");
    expect(recordStatusOf(dkim, found("something else"))).toBe("pending");
    expect(recordStatusOf(dkim, { kind: "none" })).toBe("pending");
  });

  it("SPF: one v=spf1 record, with the configured include when there is one", () => {
    expect(recordStatusOf(spf, found("google-site-verification=x", "v=spf1 include:_spf.google.com ~all"))).toBe("verified");
    expect(recordStatusOf(spf, found("v=spf1 -all", "v=spf1 a ~all"))).toBe("failed");
    expect(recordStatusOf(spf, found("v=spf1 a ~all"), { spfInclude: "amazonses.com" })).toBe("failed");
    expect(recordStatusOf(spf, found("v=spf1 include:amazonses.com ~all"), { spfInclude: "amazonses.com" })).toBe("verified");
    expect(recordStatusOf(spf, { kind: "none" })).toBe("pending");
  });

  it("DMARC: exactly one v=DMARC1 record", () => {
    expect(recordStatusOf(dmarc, found("v=DMARC1; p=reject; rua=mailto:d@example.com"))).toBe("verified");
    expect(recordStatusOf(dmarc, found("v=DMARC1; p=none", "v=DMARC1; p=reject"))).toBe("failed");
    expect(recordStatusOf(dmarc, { kind: "none" })).toBe("pending");
  });

  it("a lookup without an answer decides nothing", () => {
    expect(recordStatusOf(dkim, { kind: "error", code: "ETIMEOUT" })).toBeUndefined();
  });
});
