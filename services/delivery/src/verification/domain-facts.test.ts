import { startTestDnsServer, type TestDnsServer } from "@herald/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createResolver } from "../sending-domains/txt-lookup.js";
import { createDomainFactsLookup } from "./domain-facts.js";

describe("a domain's DNS facts, through DNS_SERVERS", () => {
  let dns: TestDnsServer;
  beforeAll(async () => {
    dns = await startTestDnsServer();
  });
  afterAll(() => dns.stop());

  const lookupOf = () => createDomainFactsLookup(createResolver({ servers: [dns.address], timeoutMs: 500, tries: 1 }));

  it("finds the domain from NS, SOA, MX or A, and a website from A or AAAA of the domain or www.", async () => {
    const lookup = lookupOf();
    dns.setNs("ns.facts.test", ["ns1.facts.test"]);
    dns.setSoa("soa.facts.test", "ns1.facts.test");
    dns.setMx("mx.facts.test", [{ priority: 10, exchange: "mail.facts.test" }]);
    dns.setA("a.facts.test", ["192.0.2.1"]);
    dns.setAaaa("aaaa.facts.test", ["2001:db8::1"]);
    dns.setA("www.www-a.facts.test", ["192.0.2.2"]);
    dns.setAaaa("www.www-aaaa.facts.test", ["2001:db8:0:0:0:0:0:2"]);
    dns.setTxt("txt.facts.test", ["v=spf1 -all"]);
    dns.failName("broken.facts.test");

    expect(await lookup("ns.facts.test")).toMatchObject({ exists: true, hasWebsite: false });
    expect(await lookup("soa.facts.test")).toMatchObject({ exists: true, hasWebsite: false });
    expect(await lookup("mx.facts.test")).toEqual({
      exchange: { kind: "mx", hosts: ["mail.facts.test"] },
      exists: true,
      hasWebsite: false,
    });
    expect(await lookup("a.facts.test")).toMatchObject({ exists: true, hasWebsite: true });
    // AAAA alone makes a website but, like a TXT record, not a domain that the four records show.
    expect(await lookup("aaaa.facts.test")).toMatchObject({ exists: false, hasWebsite: true });
    expect(await lookup("www-a.facts.test")).toMatchObject({ hasWebsite: true });
    expect(await lookup("www-aaaa.facts.test")).toMatchObject({ hasWebsite: true });
    expect(await lookup("txt.facts.test")).toMatchObject({ exists: false, hasWebsite: false });
    expect(await lookup("missing.facts.test")).toEqual({ exchange: { kind: "no-domain" }, exists: false, hasWebsite: false });
    expect(await lookup("broken.facts.test")).toEqual({
      exchange: { kind: "dns-error", code: "ESERVFAIL" },
      exists: false,
      hasWebsite: false,
    });
  });

  it("keeps an answer, so that a record published since is not seen until it expires", async () => {
    const lookup = lookupOf();
    expect(await lookup("later.facts.test")).toMatchObject({ exists: false });
    dns.setA("later.facts.test", ["192.0.2.3"]);
    expect(await lookup("later.facts.test")).toMatchObject({ exists: false });
    expect(await lookupOf()("later.facts.test")).toMatchObject({ exists: true, hasWebsite: true });
  });

  it("rejects records the test server cannot encode", () => {
    expect(() => dns.setAaaa("bad.facts.test", ["2001:db8::1::2"])).toThrow(/IPv6/);
    expect(() => dns.setAaaa("bad.facts.test", ["192.0.2.1"])).toThrow(/IPv6/);
  });
});
