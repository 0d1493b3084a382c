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
    domain: string;
    valid: boolean;
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

  it("answers a deliverable address with its mail servers, in the success envelope", async () => {
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
        domain,
        valid: true,
        result: "deliverable",
        reasons: [],
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
