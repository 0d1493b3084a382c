import { randomUUID } from "node:crypto";
import { testDnsClient } from "@herald/testing";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { type CreatedProject, createProject, restClient, signUp } from "./support/http.js";

const { stack, dns: dnsServer } = inject("herald");
const call = restClient(stack.gatewayUrl);
const dns = testDnsClient(dnsServer.controlUrl);

interface Verified {
  data: {
    email: string;
    valid: boolean;
    isTypo: boolean;
    suggestion: string | null;
    result: string;
    reasons: string[];
    mailExchange: string;
    mailServers: string[];
    domainExists: boolean;
    hasMxRecords: boolean;
  };
}

describe("issue 30, contract gaps: /v1/verify suggestions and special-use names", () => {
  let project: CreatedProject;

  beforeAll(async () => {
    project = await createProject(call, (await signUp(call, "gaps-verify")).cookie, "Gaps verify");
  });

  const verify = async (email: string) => {
    const answer = await call<Verified>("POST", "/v1/verify", { key: project.secretKey, body: { email } });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body.data;
  };

  it("suggests the nearest well-known provider rather than a swap of the top-level domain: yahoo.cm is yahoo.com", async () => {
    expect(await verify("ann@yahoo.cm")).toMatchObject({ isTypo: true, suggestion: "ann@yahoo.com" });
    expect((await verify("ann@yahoo.cm")).reasons).toContain("possible_typo");
    expect(await verify("bob@hotmial.com")).toMatchObject({ isTypo: true, suggestion: "bob@hotmail.com" });
    // A near-miss of a provider is flagged even when the typo domain takes mail, as typo-squatted domains do.
    await dns.setMx("outlok.com", [{ priority: 10, exchange: "mx.outlok.com" }]);
    expect(await verify("eve@outlok.com")).toMatchObject({ isTypo: true, suggestion: "eve@outlook.com" });
  });

  it("does not flag a domain with working MX records on its top-level domain alone", async () => {
    // company.test, with MX and A records, was "a possible typo" of company.de.
    const company = `company-${randomUUID().slice(0, 8)}.test`;
    await dns.setMx(company, [{ priority: 10, exchange: `mx.${company}` }]);
    await dns.setA(company, ["192.0.2.80"]);
    expect(await verify(`grace@${company}`)).toMatchObject({
      isTypo: false,
      suggestion: null,
      reasons: [],
      result: "deliverable",
      hasMxRecords: true,
    });
    await dns.setMx("company.test", [{ priority: 10, exchange: "mx.company.test" }]);
    await dns.setA("company.test", ["192.0.2.81"]);
    expect(await verify("grace@company.test")).toMatchObject({ isTypo: false, suggestion: null, result: "deliverable" });
    // A domain of a common top-level name with mail servers is not told to switch it either.
    const acme = `acme-${randomUUID().slice(0, 8)}.cm`;
    await dns.setMx(acme, [{ priority: 10, exchange: `mx.${acme}` }]);
    expect(await verify(`joe@${acme}`)).toMatchObject({ isTypo: false, suggestion: null });
  });

  it("treats RFC 6761 and RFC 2606 special-use names as such", async () => {
    // .invalid never exists and .localhost is the sender's own machine: undeliverable, without asking DNS.
    for (const domain of ["shop.invalid", "mail.localhost"]) {
      expect(await verify(`someone@${domain}`), domain).toMatchObject({
        valid: false,
        result: "undeliverable",
        reasons: ["special_use_domain"],
        mailExchange: "none",
        mailServers: [],
        domainExists: false,
        isTypo: false,
        suggestion: null,
      });
    }
    // A name under .invalid answers so even where a resolver would claim it exists.
    await dns.setMx("mail.invalid", [{ priority: 10, exchange: "mx.mail.invalid" }]);
    expect((await verify("someone@mail.invalid")).reasons).toEqual(["special_use_domain"]);
    // .test and .example are looked up like any name (RFC 6761 6.2, 6.5), and never taken for a typo.
    const tested = `absent-${randomUUID().slice(0, 8)}.test`;
    expect(await verify(`someone@${tested}`)).toMatchObject({ reasons: ["domain_not_found"], isTypo: false, suggestion: null });
    const documented = `docs-${randomUUID().slice(0, 8)}.example`;
    await dns.setMx(documented, [{ priority: 10, exchange: `mx.${documented}` }]);
    expect(await verify(`someone@${documented}`)).toMatchObject({ result: "deliverable", isTypo: false, suggestion: null });
    // Without mail servers, .example is not a typo of another top-level domain either.
    expect(await verify(`someone@shop-${randomUUID().slice(0, 8)}.example`)).toMatchObject({ isTypo: false, suggestion: null });
  });
});
