import { startTestDnsServer, type TestDnsServer } from "@herald/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createResolver, createTxtLookup } from "./txt-lookup.js";

describe("TXT lookups through DNS_SERVERS", () => {
  let dns: TestDnsServer;
  beforeAll(async () => {
    dns = await startTestDnsServer();
  });
  afterAll(() => dns.stop());

  it("answers each record with its strings joined, nothing for unknown names, an error when no server answers", async () => {
    const lookup = createTxtLookup(createResolver({ servers: [dns.address], timeoutMs: 500, tries: 1 }));
    // Long enough to need several strings and more than a classic 512-byte UDP answer.
    const long = `v=DKIM1; k=rsa; p=${"A".repeat(700)}`;
    dns.setTxt("sel._domainkey.lookup.test", [long, "second"]);
    dns.setTxt("empty.lookup.test", []);
    expect(await lookup("SEL._domainkey.lookup.test")).toEqual({ kind: "records", records: expect.arrayContaining([long, "second"]) });
    expect(await lookup("missing.lookup.test")).toEqual({ kind: "none" });
    expect(await lookup("empty.lookup.test")).toEqual({ kind: "none" });
    dns.deleteTxt("sel._domainkey.lookup.test");
    expect(await lookup("sel._domainkey.lookup.test")).toEqual({ kind: "none" });

    const silent = await startTestDnsServer();
    const address = silent.address;
    await silent.stop();
    const nobody = createTxtLookup(createResolver({ servers: [address], timeoutMs: 100, tries: 1 }));
    expect((await nobody("any.lookup.test")).kind).toBe("error");
  });
});
