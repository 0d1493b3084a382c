import { Resolver } from "node:dns/promises";
import { testDnsClient, testSmtpSinkClient } from "@herald/testing";
import { dkimVerify } from "mailauth";
import { simpleParser } from "mailparser";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { verifiedDomain } from "./support/domains.js";
import { type CreatedProject, createProject, restClient, signUp, uniqueEmail } from "./support/http.js";
import type { Contact } from "./support/resources.js";

const { stack, dns: dnsServer, smtp } = inject("herald");
const call = restClient(stack.gatewayUrl);
const dns = testDnsClient(dnsServer.controlUrl);
const sink = testSmtpSinkClient(smtp.controlUrl);

/** The message the stack delivered to this address, with its raw text (waits for it). */
async function received(address: string) {
  const [message] = await sink.waitForMessages(1, { to: address, timeoutMs: 20_000 });
  if (!message) throw new Error(`nothing arrived for ${address}`);
  const parsed = await simpleParser(message.raw);
  const header = (name: string) => {
    const value = parsed.headerLines.find((line) => line.key === name.toLowerCase())?.line;
    return value?.slice(value.indexOf(":") + 1).trim();
  };
  return { raw: message.raw, header };
}

describe("List-Unsubscribe on /v1/send", () => {
  let project: CreatedProject;
  let domain: string;
  const templates: Record<string, string> = {};

  beforeAll(async () => {
    project = await createProject(call, (await signUp(call, "list-unsubscribe")).cookie, "Newsletter");
    ({ domain } = await verifiedDomain(call, dns, project.secretKey, "list-unsub"));
    for (const type of ["MARKETING", "TRANSACTIONAL", "HEADLESS"]) {
      const created = await call<{ id: string }>("POST", "/templates", {
        key: project.secretKey,
        body: { name: `${type} news`, type, subject: "Our news", body: "<p>News</p>", from: `news@${domain}` },
      });
      expect(created.status).toBe(201);
      templates[type] = created.body.id;
    }
  });

  const send = (to: string, body: Record<string, unknown>) =>
    call<{ data: { emails: Array<{ contact: { id: string } }> } }>("POST", "/v1/send", { key: project.secretKey, body: { to, ...body } });

  it("gives a MARKETING template's email a signed one-click List-Unsubscribe (RFC 8058) that unsubscribes its recipient", async () => {
    const to = uniqueEmail("marketing");
    const sent = await send(to, { template: templates.MARKETING, subscribed: true });
    expect(sent.status).toBe(200);
    const contactId = sent.body.data.emails[0]?.contact.id ?? "";
    const { raw, header } = await received(to);
    expect(header("List-Unsubscribe-Post")).toBe("List-Unsubscribe=One-Click");
    const url = /^<(https?:\/\/[^>]+)>$/.exec(header("List-Unsubscribe") ?? "")?.[1] ?? "";
    expect(url.startsWith(`${stack.gatewayUrl}/unsubscribe/`)).toBe(true);

    // RFC 8058 asks for both headers under the DKIM signature.
    const resolver = new Resolver();
    resolver.setServers([dnsServer.address]);
    const dkim = await dkimVerify(Buffer.from(raw), {
      resolver: (name: string, type: string) => resolver.resolve(name, type as "TXT"),
      strict: true,
    });
    expect(dkim.results.map((result) => result.status?.result)).toEqual(["pass"]);
    expect(/^DKIM-Signature:[\s\S]*?;\s*h=([^;]*)/im.exec(raw)?.[1]?.replace(/\s/g, "").toLowerCase()).toMatch(
      /list-unsubscribe:list-unsubscribe-post/,
    );

    const oneClick = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "List-Unsubscribe=One-Click",
    });
    expect(oneClick.status).toBe(200);
    expect((await call<Contact>("GET", `/contacts/${contactId}`, { key: project.secretKey })).body.subscribed).toBe(false);
  });

  it("leaves TRANSACTIONAL and HEADLESS templates and inline bodies without it", async () => {
    const cases: Array<[string, Record<string, unknown>]> = [
      [uniqueEmail("transactional"), { template: templates.TRANSACTIONAL }],
      [uniqueEmail("headless"), { template: templates.HEADLESS }],
      [uniqueEmail("inline"), { from: `news@${domain}`, subject: "Receipt", body: "<p>Paid</p>" }],
    ];
    for (const [to, body] of cases) expect((await send(to, body)).status).toBe(200);
    for (const [to] of cases) {
      const { header } = await received(to);
      expect(header("List-Unsubscribe")).toBeUndefined();
      expect(header("List-Unsubscribe-Post")).toBeUndefined();
    }
  });
});
