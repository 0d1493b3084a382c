import { startTestDnsServer, type TestDnsServer } from "@herald/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createResolver } from "../sending-domains/txt-lookup.js";
import { createMailExchangeLookup } from "./mail-exchange.js";

describe("where a domain's mail goes, through DNS_SERVERS", () => {
  let dns: TestDnsServer;
  beforeAll(async () => {
    dns = await startTestDnsServer();
  });
  afterAll(() => dns.stop());

  it("answers MX hosts by preference, the domain itself for address records only, and each way a domain takes no mail", async () => {
    const lookup = createMailExchangeLookup(createResolver({ servers: [dns.address], timeoutMs: 500, tries: 1 }));
    dns.setMx("mx.verify.test", [
      { priority: 20, exchange: "Backup.Mail.verify.test" },
      { priority: 10, exchange: "primary.mail.verify.test" },
    ]);
    dns.setA("implicit.verify.test", ["192.0.2.10"]);
    dns.setMx("null.verify.test", [{ priority: 0, exchange: "." }]);
    dns.setTxt("nomail.verify.test", ["v=spf1 -all"]);
    dns.failName("broken.verify.test");

    expect(await lookup("mx.verify.test")).toEqual({ kind: "mx", hosts: ["primary.mail.verify.test", "backup.mail.verify.test"] });
    expect(await lookup("implicit.verify.test")).toEqual({ kind: "implicit", hosts: ["implicit.verify.test"] });
    expect(await lookup("null.verify.test")).toEqual({ kind: "null-mx" });
    expect(await lookup("nomail.verify.test")).toEqual({ kind: "none" });
    expect(await lookup("missing.verify.test")).toEqual({ kind: "no-domain" });
    expect(await lookup("broken.verify.test")).toEqual({ kind: "dns-error", code: "ESERVFAIL" });

    const silent = await startTestDnsServer();
    const address = silent.address;
    await silent.stop();
    const nobody = createMailExchangeLookup(createResolver({ servers: [address], timeoutMs: 100, tries: 1 }));
    expect(await nobody("mx.verify.test")).toMatchObject({ kind: "dns-error" });
  });
});
