import { randomUUID } from "node:crypto";
import { createClient } from "@connectrpc/connect";
import { createRpcTransport } from "@herald/platform";
import { EmailKind, EmailsService } from "@herald/proto/herald/delivery/v1/emails_service_pb";
import { eventually, testDnsClient, testSmtpSinkClient } from "@herald/testing";
import { simpleParser } from "mailparser";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { createLinkTokens } from "../services/delivery/src/links/link-tokens.js";
import { verifiedDomain } from "./support/domains.js";
import { type CreatedProject, createProject, restClient, signUp, uniqueEmail } from "./support/http.js";
import type { Contact } from "./support/resources.js";

const { stack, dns: dnsServer, smtp } = inject("herald");
const call = restClient(stack.gatewayUrl);
const dns = testDnsClient(dnsServer.controlUrl);
const sink = testSmtpSinkClient(smtp.controlUrl);
const emails = createClient(EmailsService, createRpcTransport({ baseUrl: stack.serviceUrls.delivery, timeoutMs: 30_000 }));

type SendAnswer = { data: { emails: Array<{ contact: { id: string; email: string }; email: string }> } };
type ActivityPage = { data: Array<{ type: string; emailId: string; url?: string | null }> };

async function receivedHtml(address: string): Promise<{ html: string; header: (name: string) => string | undefined }> {
  const [message] = await sink.waitForMessages(1, { to: address, timeoutMs: 20_000 });
  if (!message) throw new Error(`nothing arrived for ${address}`);
  const parsed = await simpleParser(message.raw);
  const [head] = message.raw.replace(/\r\n[ \t]+/g, " ").split("\r\n\r\n");
  const header = (name: string) => new RegExp(`^${name}:[ \t]*(.*)$`, "im").exec(head ?? "")?.[1]?.trim();
  return { html: typeof parsed.html === "string" ? parsed.html : "", header };
}

const linksIn = (html: string, path: string) =>
  [...html.matchAll(/(?:href|src)="([^"]+)"/g)]
    .map((match) => match[1] ?? "")
    .filter((url) => url.startsWith(`${stack.gatewayUrl}${path}`));

const get = (url: string) => fetch(url, { redirect: "manual" });
const post = (url: string, form: Record<string, string>) =>
  fetch(url, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form),
  });

describe("tracking, unsubscribe and the recipient's pages", () => {
  let project: CreatedProject;
  let other: CreatedProject;
  let key: string;
  let domain: string;

  beforeAll(async () => {
    project = await createProject(call, (await signUp(call, "tracking")).cookie, "Tracking");
    other = await createProject(call, (await signUp(call, "tracking-other")).cookie, "Other");
    key = project.secretKey;
    domain = (await verifiedDomain(call, dns, key, "track")).domain;
  });

  const send = async (to: string, body: string) => {
    const answer = await call<SendAnswer>("POST", "/v1/send", { key, body: { to, from: `hello@${domain}`, subject: "Hi", body } });
    expect(answer.status).toBe(200);
    return answer.body.data.emails[0] ?? { contact: { id: "", email: "" }, email: "" };
  };
  const activityOf = async (emailId: string, type: string) =>
    (await call<ActivityPage>("GET", `/activity?type=${type}&limit=100`, { key })).body.data.filter((item) => item.emailId === emailId);

  it("records one open for the pixel however often it loads, and each click, redirecting to the exact URL", async () => {
    const to = uniqueEmail("engaged");
    const target = "https://example.com/pricing?plan=pro&ref=email";
    const sent = await send(
      to,
      `<html><body><p><a href="https://example.com/pricing?plan=pro&amp;ref=email">Pricing</a></p></body></html>`,
    );
    const { html } = await receivedHtml(to);
    const [pixelUrl] = linksIn(html, "/t/o/");
    const [clickUrl] = linksIn(html, "/t/c/");
    if (!pixelUrl || !clickUrl) throw new Error(`no tracking links in ${html}`);

    for (let load = 0; load < 3; load++) {
      const pixel = await get(pixelUrl);
      expect(pixel.status).toBe(200);
      expect(pixel.headers.get("content-type")).toBe("image/gif");
      expect(pixel.headers.get("cache-control")).toContain("no-store");
    }
    const click = await get(clickUrl);
    expect(click.status).toBe(302);
    expect(click.headers.get("location")).toBe(target);

    const opens = await eventually(async () => {
      const items = await activityOf(sent.email, "email.open");
      return items.length > 0 && items;
    }, 15_000);
    expect(opens).toHaveLength(1);
    const clicks = await activityOf(sent.email, "email.click");
    expect(clicks).toHaveLength(1);
    expect(clicks[0]?.url).toBe(target);
    // Another project's key sees none of it.
    const foreign = await call<ActivityPage>("GET", "/activity?limit=100", { key: other.secretKey });
    expect(foreign.body.data.filter((item) => item.emailId === sent.email)).toEqual([]);
  });

  it("redirects a link with non-ASCII characters or a line break to its percent-encoded form", async () => {
    const to = uniqueEmail("unicode-link");
    await send(
      to,
      `<p><a href="https://example.com/wiki/日本?q=é&amp;x=1">Japan</a> <a href="https://example.com/a&#13;&#10;b">Broken</a></p>`,
    );
    const [japan, broken] = linksIn((await receivedHtml(to)).html, "/t/c/");
    if (!japan || !broken) throw new Error("no tracked links");
    const first = await get(japan);
    expect(first.status).toBe(302);
    expect(first.headers.get("location")).toBe("https://example.com/wiki/%E6%97%A5%E6%9C%AC?q=%C3%A9&x=1");
    const second = await get(broken);
    expect(second.status).toBe(302);
    expect(second.headers.get("location")).toBe("https://example.com/ab");
  });

  it("answers a HEAD on a click link with its redirect and records no click: link scanners look that way", async () => {
    const to = uniqueEmail("scanned");
    const sent = await send(to, `<p><a href="https://example.com/scanned">Scanned</a></p>`);
    const [clickUrl] = linksIn((await receivedHtml(to)).html, "/t/c/");
    if (!clickUrl) throw new Error("no tracked link");
    const looked = await fetch(clickUrl, { method: "HEAD", redirect: "manual" });
    expect(looked.status).toBe(302);
    expect(looked.headers.get("location")).toBe("https://example.com/scanned");
    expect((await fetch(`${stack.gatewayUrl}/t/c/not-a-token`, { method: "HEAD", redirect: "manual" })).status).toBe(404);
    expect((await get(clickUrl)).status).toBe(302);
    const clicks = await eventually(async () => {
      const items = await activityOf(sent.email, "email.click");
      return items.length > 0 && items;
    }, 15_000);
    expect(clicks).toHaveLength(1);
  });

  it("counts a click on an email whose pixel never loaded as its open too", async () => {
    const to = uniqueEmail("click-only");
    const sent = await send(to, `<a href="https://example.com/a">a</a>`);
    const [clickUrl] = linksIn((await receivedHtml(to)).html, "/t/c/");
    expect((await get(clickUrl ?? "")).status).toBe(302);
    expect(await activityOf(sent.email, "email.open")).toHaveLength(1);
    expect(await activityOf(sent.email, "email.click")).toHaveLength(1);
  });

  it("answers the pixel for any token, and a 404 page for a click token that does not verify", async () => {
    expect((await get(`${stack.gatewayUrl}/t/o/forged-token`)).status).toBe(200);
    const to = uniqueEmail("tamper");
    await send(to, `<a href="https://example.com/a">a</a>`);
    const [clickUrl] = linksIn((await receivedHtml(to)).html, "/t/c/");
    const tampered = `${clickUrl?.slice(0, -2)}${clickUrl?.endsWith("A") ? "B" : "A"}A`;
    const answer = await get(tampered);
    expect(answer.status).toBe(404);
    expect(answer.headers.get("content-type")).toContain("text/html");
    expect(answer.headers.get("location")).toBeNull();
  });

  it("does not redirect a click token, however well signed, for an email that does not exist", async () => {
    // Signed with the stack's own secret (global-setup keeps it in .herald/): what a leaked secret would let anyone make.
    const secret = process.env.LINK_SIGNING_SECRET;
    if (!secret) throw new Error("global-setup sets LINK_SIGNING_SECRET");
    const tokens = createLinkTokens(secret);
    const token = tokens.sign({ kind: "click", projectId: project.id, emailId: randomUUID(), url: "https://evil.example/phish" });
    for (const method of ["GET", "HEAD"]) {
      const answer = await fetch(`${stack.gatewayUrl}/t/c/${token}`, { method, redirect: "manual" });
      expect(answer.status).toBe(404);
      expect(answer.headers.get("location")).toBeNull();
    }
  });

  it("follows the project's tracking mode: disabled, and marketing only", async () => {
    expect((await call<{ mode: string }>("GET", "/settings/tracking", { key })).body).toEqual({ mode: "enabled" });
    expect((await call("PUT", "/settings/tracking", { key, body: { mode: "sometimes" } })).status).toBe(422);
    expect((await call("GET", "/settings/tracking", { key: project.publicKey })).status).toBe(401);
    try {
      for (const mode of ["disabled", "marketing"]) {
        expect((await call<{ mode: string }>("PUT", "/settings/tracking", { key, body: { mode } })).body).toEqual({ mode });
        const to = uniqueEmail(`mode-${mode}`);
        await send(to, `<a href="https://example.com/a">a</a>`);
        const { html } = await receivedHtml(to);
        expect(html).toContain('href="https://example.com/a"');
        expect(linksIn(html, "/t/")).toEqual([]);
      }
      // Another project keeps its own mode.
      expect((await call<{ mode: string }>("GET", "/settings/tracking", { key: other.secretKey })).body).toEqual({ mode: "enabled" });
    } finally {
      await call("PUT", "/settings/tracking", { key, body: { mode: "enabled" } });
    }
  });

  it("unsubscribes with the RFC 8058 one-click POST of a marketing email's List-Unsubscribe, emitting contact.unsubscribed", async () => {
    const to = uniqueEmail("marketing");
    const created = await call<Contact>("POST", "/contacts", { key, body: { email: to } });
    expect(created.body.subscribed).toBe(true);
    await emails.enqueueEmail({
      projectId: project.id,
      idempotencyKey: `campaign-${to}`,
      contactId: created.body.id,
      to: { email: to, name: "" },
      from: { email: `news@${domain}`, name: "News" },
      subject: "Our news",
      html: "<p>News</p>",
      kind: EmailKind.CAMPAIGN,
    });
    const { header } = await receivedHtml(to);
    expect(header("List-Unsubscribe-Post")).toBe("List-Unsubscribe=One-Click");
    const url = /^<(https?:\/\/[^>]+)>/.exec(header("List-Unsubscribe") ?? "")?.[1] ?? "";
    expect(url.startsWith(`${stack.gatewayUrl}/unsubscribe/`)).toBe(true);

    // GET shows a confirmation and changes nothing (a link scanner must not unsubscribe anyone).
    const page = await get(url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(to);
    expect((await call<Contact>("GET", `/contacts/${created.body.id}`, { key })).body.subscribed).toBe(true);

    const oneClick = await post(url, { "List-Unsubscribe": "One-Click" });
    expect(oneClick.status).toBe(200);
    expect((await call<Contact>("GET", `/contacts/${created.body.id}`, { key })).body.subscribed).toBe(false);
    const events = await call<{ data: Array<{ name: string }> }>("GET", `/events/contact/${created.body.id}`, { key });
    expect(events.body.data.filter((event) => event.name === "contact.unsubscribed")).toHaveLength(1);
    // A second one-click changes nothing and emits nothing.
    expect((await post(url, { "List-Unsubscribe": "One-Click" })).status).toBe(200);
    const again = await call<{ data: Array<{ name: string }> }>("GET", `/events/contact/${created.body.id}`, { key });
    expect(again.body.data.filter((event) => event.name === "contact.unsubscribed")).toHaveLength(1);
  });

  it("serves the subscribe and manage pages from the links rendered into an email", async () => {
    const to = uniqueEmail("pages");
    const sent = await send(to, `<p><a href="{{unsubscribeUrl}}">u</a> <a href="{{subscribeUrl}}">s</a> <a href="{{manageUrl}}">m</a></p>`);
    const { html } = await receivedHtml(to);
    const [subscribeUrl] = linksIn(html, "/subscribe/");
    const [manageUrl] = linksIn(html, "/manage/");
    const [unsubscribeUrl] = linksIn(html, "/unsubscribe/");
    if (!subscribeUrl || !manageUrl || !unsubscribeUrl) throw new Error(`the recipient's links are missing from ${html}`);
    const contactUrl = `/contacts/${sent.contact.id}`;
    // A /v1/send recipient starts unsubscribed.
    expect((await call<Contact>("GET", contactUrl, { key })).body.subscribed).toBe(false);

    expect(await (await get(subscribeUrl)).text()).toContain(to);
    expect((await post(subscribeUrl, {})).status).toBe(200);
    expect((await call<Contact>("GET", contactUrl, { key })).body.subscribed).toBe(true);

    const manage = await (await get(manageUrl)).text();
    expect(manage).toContain("is subscribed to");
    const unsubscribed = await post(manageUrl, { action: "unsubscribe" });
    expect(unsubscribed.status).toBe(200);
    expect(await unsubscribed.text()).toContain("is unsubscribed from");
    expect((await call<Contact>("GET", contactUrl, { key })).body.subscribed).toBe(false);
    expect((await post(manageUrl, { action: "subscribe" })).status).toBe(200);
    expect((await call<Contact>("GET", contactUrl, { key })).body.subscribed).toBe(true);
    expect((await post(manageUrl, { action: "explode" })).status).toBe(422);

    // A token that does not verify, and one whose contact was deleted since, lead to a 404 page.
    expect((await get(`${stack.gatewayUrl}/unsubscribe/not-a-token`)).status).toBe(404);
    expect((await call("DELETE", contactUrl, { key })).status).toBe(204);
    const gone = await post(unsubscribeUrl, { "List-Unsubscribe": "One-Click" });
    expect(gone.status).toBe(404);
    expect(gone.headers.get("content-type")).toContain("text/html");
  });
});
