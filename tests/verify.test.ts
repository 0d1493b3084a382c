import { randomUUID } from "node:crypto";
import { testDnsClient, testSmtpSinkClient } from "@herald/testing";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { uniqueDomain, verifiedDomain } from "./support/domains.js";
import { type CreatedProject, createProject, restClient, signUp } from "./support/http.js";
import type { ErrorBody } from "./support/resources.js";

const { stack, dns: dnsServer, smtp } = inject("herald");
const call = restClient(stack.gatewayUrl);
const dns = testDnsClient(dnsServer.controlUrl);
const sink = testSmtpSinkClient(smtp.controlUrl);

interface Verified {
  success: true;
  data: {
    email: string;
    valid: boolean;
    isDisposable: boolean;
    isAlias: boolean;
    isTypo: boolean;
    isPlusAddressed: boolean;
    isPersonalEmail: boolean;
    domainExists: boolean;
    hasWebsite: boolean;
    hasMxRecords: boolean;
    suggestion: string | null;
    domain: string;
    result: "deliverable" | "risky" | "undeliverable" | "unknown";
    reasons: string[];
    mailExchange: string;
    mailServers: string[];
    disposable: boolean;
    roleAddress: boolean;
    suppressed: boolean;
  };
}

/** A domain of the test DNS server whose mail goes to one MX host. */
async function mailDomain(label: string): Promise<string> {
  const domain = uniqueDomain(label);
  await dns.setMx(domain, [{ priority: 10, exchange: `mx.${domain}` }]);
  return domain;
}

describe("POST /v1/verify", () => {
  let project: CreatedProject;
  let other: CreatedProject;
  let key: string;

  beforeAll(async () => {
    project = await createProject(call, (await signUp(call, "verify")).cookie, "Verify");
    other = await createProject(call, (await signUp(call, "verify-other")).cookie, "Other");
    key = project.secretKey;
  });

  const verify = (email: unknown, options: { key?: string } = {}) =>
    call<Verified>("POST", "/v1/verify", { key: options.key ?? key, body: { email } });
  const refused = (body: unknown, options: { key?: string } = {}) =>
    call<ErrorBody>("POST", "/v1/verify", { key: options.key ?? key, body });

  it("answers a deliverable address with SPEC.md's fields and its mail servers, in the success envelope", async () => {
    const domain = uniqueDomain("deliverable");
    await dns.setMx(domain, [
      { priority: 20, exchange: `backup.${domain}` },
      { priority: 5, exchange: `mx.${domain}` },
    ]);
    const answer = await verify(`  Jane.Doe@${domain.toUpperCase()} `);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      success: true,
      data: {
        email: `jane.doe@${domain}`,
        valid: true,
        isDisposable: false,
        isAlias: false,
        isTypo: false,
        isPlusAddressed: false,
        isPersonalEmail: false,
        domainExists: true,
        hasWebsite: false,
        hasMxRecords: true,
        reasons: [],
        suggestion: null,
        domain,
        result: "deliverable",
        mailExchange: "mx",
        mailServers: [`mx.${domain}`, `backup.${domain}`],
        disposable: false,
        roleAddress: false,
        suppressed: false,
      },
    });
  });

  it("takes a domain without MX but with an address record as its own mail server (RFC 5321 5.1)", async () => {
    const domain = uniqueDomain("implicit");
    await dns.setA(domain, ["192.0.2.25"]);
    const answer = await verify(`someone@${domain}`);
    expect(answer.body.data).toMatchObject({ valid: true, result: "deliverable", mailExchange: "implicit", mailServers: [domain] });
  });

  it("says a domain exists from its NS, SOA, MX or A records, and not from a TXT record or NXDOMAIN", async () => {
    const withNs = uniqueDomain("ns");
    await dns.setNs(withNs, [`ns1.${withNs}`]);
    const withSoa = uniqueDomain("soa");
    await dns.setSoa(withSoa, `ns1.${withSoa}`);
    const withMx = await mailDomain("mx");
    const withA = uniqueDomain("a");
    await dns.setA(withA, ["192.0.2.30"]);
    for (const domain of [withNs, withSoa, withMx, withA]) {
      expect((await verify(`someone@${domain}`)).body.data.domainExists, domain).toBe(true);
    }
    const txtOnly = uniqueDomain("txtonly");
    await dns.setTxt(txtOnly, ["v=spf1 -all"]);
    for (const domain of [txtOnly, uniqueDomain("absent")]) {
      expect((await verify(`someone@${domain}`)).body.data, domain).toMatchObject({ domainExists: false, hasMxRecords: false });
    }
  });

  it("has MX records only when MX records name a mail server, not for an implicit server or a null MX", async () => {
    const implicit = uniqueDomain("implicit-mx");
    await dns.setA(implicit, ["192.0.2.31"]);
    expect((await verify(`someone@${implicit}`)).body.data).toMatchObject({ hasMxRecords: false, domainExists: true });
    const nullMx = uniqueDomain("null-mx");
    await dns.setMx(nullMx, [{ priority: 0, exchange: "." }]);
    expect((await verify(`someone@${nullMx}`)).body.data).toMatchObject({ hasMxRecords: false, domainExists: true });
    expect((await verify(`someone@${await mailDomain("real-mx")}`)).body.data.hasMxRecords).toBe(true);
  });

  it("has a website when the domain or www. under it has an A or AAAA record, and remembers the answer", async () => {
    const byA = await mailDomain("web-a");
    await dns.setA(byA, ["192.0.2.40"]);
    const byAaaa = await mailDomain("web-aaaa");
    await dns.setAaaa(byAaaa, ["2001:db8::40"]);
    const byWwwA = await mailDomain("web-www-a");
    await dns.setA(`www.${byWwwA}`, ["192.0.2.41"]);
    const byWwwAaaa = await mailDomain("web-www-aaaa");
    await dns.setAaaa(`www.${byWwwAaaa}`, ["2001:db8::41"]);
    for (const domain of [byA, byAaaa, byWwwA, byWwwAaaa]) {
      expect((await verify(`someone@${domain}`)).body.data.hasWebsite, domain).toBe(true);
    }
    const without = await mailDomain("web-none");
    expect((await verify(`someone@${without}`)).body.data.hasWebsite).toBe(false);
    // The domain's DNS answer is kept for a while: a website published since is not seen yet.
    await dns.setA(without, ["192.0.2.42"]);
    expect((await verify(`other@${without}`)).body.data.hasWebsite).toBe(false);
  });

  it("calls a free provider's address personal, but neither a throwaway one nor a company's", async () => {
    await dns.setMx("gmail.com", [{ priority: 5, exchange: "gmail-smtp-in.l.google.com" }]);
    await dns.setMx("mailinator.com", [{ priority: 10, exchange: "mail.mailinator.com" }]);
    expect((await verify("someone@gmail.com")).body.data).toMatchObject({ isPersonalEmail: true, isDisposable: false, reasons: [] });
    expect((await verify("someone@mailinator.com")).body.data).toMatchObject({ isPersonalEmail: false, isDisposable: true });
    expect((await verify(`someone@${await mailDomain("company")}`)).body.data.isPersonalEmail).toBe(false);
  });

  it("flags a mistyped domain with possible_typo and suggests the address", async () => {
    // The typo domain exists with a mail server, as typo-squatted domains often do: the spelling alone flags it.
    await dns.setMx("gmial.com", [{ priority: 10, exchange: "mx.gmial.com" }]);
    expect((await verify("Jane@Gmial.com")).body.data).toMatchObject({
      valid: true,
      result: "risky",
      isTypo: true,
      // mailchecker lists common typo domains as throwaway services too.
      reasons: ["disposable", "possible_typo"],
      suggestion: "jane@gmail.com",
    });
    expect((await verify(`jane@${await mailDomain("spelled")}`)).body.data).toMatchObject({ isTypo: false, suggestion: null });
  });

  it("reads sub-addresses and aliases from the local part", async () => {
    const domain = await mailDomain("local-part");
    await dns.setMx("gmail.com", [{ priority: 5, exchange: "gmail-smtp-in.l.google.com" }]);
    await dns.setMx("googlemail.com", [{ priority: 5, exchange: "gmail-smtp-in.l.google.com" }]);
    const cases: [string, { isPlusAddressed: boolean; isAlias: boolean }][] = [
      [`jane+news@${domain}`, { isPlusAddressed: true, isAlias: true }],
      [`jane@${domain}`, { isPlusAddressed: false, isAlias: false }],
      [`jane.doe@${domain}`, { isPlusAddressed: false, isAlias: false }],
      [`+news@${domain}`, { isPlusAddressed: false, isAlias: false }],
      ["jane.doe@gmail.com", { isPlusAddressed: false, isAlias: true }],
      ["janedoe@gmail.com", { isPlusAddressed: false, isAlias: false }],
      ["janedoe@googlemail.com", { isPlusAddressed: false, isAlias: true }],
    ];
    for (const [email, expected] of cases) {
      expect((await verify(email)).body.data, email).toMatchObject({ ...expected, reasons: [] });
    }
  });

  it("finds undeliverable: a domain that does not exist, one without mail servers, and a null MX (RFC 7505)", async () => {
    const missing = await verify(`someone@${uniqueDomain("missing")}`);
    expect(missing.body.data).toMatchObject({
      valid: false,
      result: "undeliverable",
      reasons: ["domain_not_found"],
      mailExchange: "no_domain",
      mailServers: [],
    });

    const noMail = uniqueDomain("nomail");
    await dns.setTxt(noMail, ["v=spf1 -all"]);
    expect((await verify(`someone@${noMail}`)).body.data).toMatchObject({
      valid: false,
      result: "undeliverable",
      reasons: ["no_mail_server"],
      mailExchange: "none",
    });

    const nullMx = uniqueDomain("nullmx");
    await dns.setMx(nullMx, [{ priority: 0, exchange: "." }]);
    expect((await verify(`someone@${nullMx}`)).body.data).toMatchObject({
      valid: false,
      result: "undeliverable",
      reasons: ["null_mx"],
      mailExchange: "null_mx",
    });
  });

  it("answers unknown when the domain's DNS fails, rather than calling the address bad", async () => {
    const broken = uniqueDomain("servfail");
    await dns.failName(broken);
    expect((await verify(`someone@${broken}`)).body.data).toMatchObject({
      valid: false,
      result: "unknown",
      reasons: ["dns_error"],
      mailExchange: "dns_error",
      domainExists: false,
      hasWebsite: false,
    });
  });

  it("calls a throwaway domain (and its subdomains) and a role mailbox risky, but valid", async () => {
    // The test DNS server gives the real throwaway service a mail server, as the internet does.
    await dns.setMx("mailinator.com", [{ priority: 10, exchange: "mail.mailinator.com" }]);
    await dns.setMx("team.mailinator.com", [{ priority: 10, exchange: "mail.mailinator.com" }]);
    expect((await verify("someone@mailinator.com")).body.data).toMatchObject({
      valid: true,
      result: "risky",
      reasons: ["disposable"],
      isDisposable: true,
      disposable: true,
      roleAddress: false,
    });
    expect((await verify("someone@team.mailinator.com")).body.data).toMatchObject({ result: "risky", disposable: true });

    const domain = await mailDomain("role");
    for (const local of ["info", "postmaster", "NoReply", "support+billing"]) {
      expect((await verify(`${local}@${domain}`)).body.data).toMatchObject({
        valid: true,
        result: "risky",
        reasons: ["role_address"],
        roleAddress: true,
      });
    }
    expect((await verify(`information@${domain}`)).body.data).toMatchObject({ result: "deliverable", roleAddress: false });
  });

  it("calls an address this project suppresses after a bounce undeliverable, and only in this project", async () => {
    const { domain } = await verifiedDomain(call, dns, key, "verify-bounce");
    const recipientDomain = await mailDomain("bounces");
    const to = `gone-${randomUUID().slice(0, 8)}@${recipientDomain}`;
    await sink.rejectRecipient(to, { code: 550, message: "5.1.1 no such user" });
    try {
      expect(
        (await call("POST", "/v1/send", { key, body: { to, from: `hello@${domain}`, subject: "Hi", body: "<p>Hi</p>" } })).status,
      ).toBe(200);
      const deadline = Date.now() + 20_000;
      let answer = await verify(to);
      while (!answer.body.data.suppressed && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        answer = await verify(to);
      }
      expect(answer.body.data).toMatchObject({ valid: false, result: "undeliverable", reasons: ["suppressed"], suppressed: true });
      // Another project's key learns nothing of this project's suppressions.
      expect((await verify(to, { key: other.secretKey })).body.data).toMatchObject({
        valid: true,
        result: "deliverable",
        suppressed: false,
      });
    } finally {
      await sink.acceptRecipient(to);
    }
  });

  it("refuses a missing or malformed email with 422, and any key but the secret one", async () => {
    for (const body of [
      {},
      { email: "" },
      { email: 42 },
      { email: "not-an-email" },
      { email: "a@b" },
      { email: `${"a".repeat(250)}@x.test` },
    ]) {
      const answer = await refused(body);
      expect(answer.status, JSON.stringify(body)).toBe(422);
      expect(answer.body.error.code).toBe("VALIDATION_ERROR");
    }
    const malformed = await refused({ email: "two@@at.test" });
    expect(malformed.body.error.message).toMatch(/email/);
    expect((await refused({ email: "someone@example.com" }, { key: project.publicKey })).status).toBe(401);
    expect((await call<ErrorBody>("POST", "/v1/verify", { body: { email: "someone@example.com" } })).status).toBe(401);
  });
});
