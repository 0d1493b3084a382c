import { testDnsClient, testSmtpSinkClient } from "@herald/testing";
import { simpleParser } from "mailparser";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { createLinkTokens } from "../services/delivery/src/links/link-tokens.js";
import type { CampaignJson } from "./campaigns.test.js";
import { verifiedDomain } from "./support/domains.js";
import { type CreatedProject, createProject, restClient, signUp, uniqueEmail } from "./support/http.js";
import type { Contact } from "./support/resources.js";

const { stack, dns: dnsServer, smtp } = inject("herald");
const call = restClient(stack.gatewayUrl);
const dns = testDnsClient(dnsServer.controlUrl);
const sink = testSmtpSinkClient(smtp.controlUrl);

type Stats = { campaignId: string; sent: number; unsubscribed: number; unsubscribeRate: number };
type ActivityPage = { data: Array<{ type: string; emailId: string; campaignId: string | null; contactId: string | null }> };

/** The campaign email one address received: its id, its one-click unsubscribe URL and the recipient's links in its body. */
async function received(address: string) {
  const [message] = await sink.waitForMessages(1, { to: address, timeoutMs: 90_000 });
  if (!message) throw new Error(`nothing arrived for ${address}`);
  const parsed = await simpleParser(message.raw);
  const head = (message.raw.split(/\r?\n\r?\n/)[0] ?? "").replace(/\r?\n[ \t]+/g, " ");
  const header = (name: string) => new RegExp(`^${name}:[ \t]*(.*)$`, "im").exec(head)?.[1]?.trim() ?? "";
  const html = typeof parsed.html === "string" ? parsed.html : "";
  return {
    emailId: header("X-Herald-Email-ID"),
    oneClick: /^<(https?:\/\/[^>]+)>/.exec(header("List-Unsubscribe"))?.[1] ?? "",
    manage: /href="([^"]*\/manage\/[^"]+)"/.exec(html)?.[1] ?? "",
  };
}

/** Polls every 300 ms, under the project's rate limit (1,000 requests a minute), until `check` answers. */
async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`not done within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}

const post = (url: string, form: Record<string, string>) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(form) });

describe("campaign unsubscribes", () => {
  let project: CreatedProject;
  let other: CreatedProject;
  let key: string;
  let domain: string;

  beforeAll(async () => {
    project = await createProject(call, (await signUp(call, "campaign-unsub")).cookie, "Campaign unsubscribes");
    other = await createProject(call, (await signUp(call, "campaign-unsub-other")).cookie, "Other");
    key = project.secretKey;
    domain = (await verifiedDomain(call, dns, key, "campaign-unsub")).domain;
  });

  it("counts an unsubscribe through a campaign email's link for its campaign, once per email; older links still unsubscribe", async () => {
    const batch = `unsub-${Date.now()}`;
    const [ann, bob, carl] = [uniqueEmail("ann"), uniqueEmail("bob"), uniqueEmail("carl")];
    const contacts: Record<string, Contact> = {};
    for (const email of [ann, bob, carl]) {
      const created = await call<Contact>("POST", "/contacts", { key, body: { email, data: { batch }, subscribed: true } });
      expect(created.status).toBe(201);
      contacts[email] = created.body;
    }
    const created = await call<{ data: CampaignJson }>("POST", "/campaigns", {
      key,
      body: {
        name: `Unsubscribes ${batch}`,
        subject: "News",
        body: '<p>News</p><a href="{{ manageUrl }}">preferences</a>',
        from: `news@${domain}`,
        audienceType: "FILTERED",
        audienceCondition: { logic: "AND", groups: [{ filters: [{ field: "data.batch", operator: "equals", value: batch }] }] },
      },
    });
    expect(created.status).toBe(201);
    const campaignId = created.body.data.id;
    expect((await call("POST", `/campaigns/${campaignId}/send`, { key, body: {} })).status).toBe(200);
    const [toAnn, toBob, toCarl] = [await received(ann), await received(bob), await received(carl)];

    // The links name the email they came in, and their contact.
    const secret = process.env.LINK_SIGNING_SECRET;
    if (!secret) throw new Error("global-setup sets LINK_SIGNING_SECRET");
    const tokens = createLinkTokens(secret);
    const tokenOf = (url: string) => tokens.read(url.split("/").at(-1) ?? "");
    expect(tokenOf(toAnn.oneClick)).toEqual({
      kind: "recipient",
      projectId: project.id,
      contactId: contacts[ann]?.id,
      emailId: toAnn.emailId,
    });
    expect(tokenOf(toBob.manage)).toEqual({
      kind: "recipient",
      projectId: project.id,
      contactId: contacts[bob]?.id,
      emailId: toBob.emailId,
    });

    // Ann: the RFC 8058 one-click; again after subscribing anew: one unsubscribe of her email.
    expect((await post(toAnn.oneClick, { "List-Unsubscribe": "One-Click" })).status).toBe(200);
    expect((await post(toAnn.oneClick.replace("/unsubscribe/", "/subscribe/"), {})).status).toBe(200);
    expect((await post(toAnn.oneClick, { "List-Unsubscribe": "One-Click" })).status).toBe(200);
    // Bob: the preferences page of the body's link.
    expect((await post(toBob.manage, { action: "unsubscribe" })).status).toBe(200);
    // Carl: a link as every email carried before links named their email (contact only) still unsubscribes.
    const old = `${stack.gatewayUrl}/unsubscribe/${tokens.sign({ kind: "recipient", projectId: project.id, contactId: contacts[carl]?.id ?? "" })}`;
    expect((await post(old, { "List-Unsubscribe": "One-Click" })).status).toBe(200);
    for (const email of [ann, bob, carl]) {
      expect((await call<Contact>("GET", `/contacts/${contacts[email]?.id}`, { key })).body.subscribed).toBe(false);
    }

    // The activity feed shows the email's unsubscribes (written with the unsubscribe itself); none for the old link's.
    const activity = await call<ActivityPage>("GET", "/activity?type=email.unsubscribe&limit=100", { key });
    expect(activity.status).toBe(200);
    const byEmail = (emailId: string) => activity.body.data.filter((item) => item.emailId === emailId);
    // Ann unsubscribed twice through her email's link: the feed shows both, the campaign counts her email once.
    const annsUnsubscribe = expect.objectContaining({ campaignId, contactId: contacts[ann]?.id });
    expect(byEmail(toAnn.emailId)).toEqual([annsUnsubscribe, annsUnsubscribe]);
    expect(byEmail(toBob.emailId)).toHaveLength(1);
    expect(byEmail(toCarl.emailId)).toEqual([]);

    // The campaign counts Ann's email once and Bob's once.
    const stats = await eventually(async () => {
      const answer = (await call<Stats>("GET", `/campaigns/${campaignId}/stats`, { key })).body;
      return answer.unsubscribed >= 2 && answer.sent === 3 ? answer : undefined;
    }, 90_000);
    // Over the emails sent, as the SMTP sink reports no deliveries.
    expect(stats).toMatchObject({ campaignId, unsubscribed: 2, unsubscribeRate: 0.6667 });
    // Another project's key reaches none of it.
    expect((await call("GET", `/campaigns/${campaignId}/stats`, { key: other.secretKey })).status).toBe(404);
    const theirs = await call<ActivityPage>("GET", "/activity?type=email.unsubscribe&limit=100", { key: other.secretKey });
    expect(theirs.body.data).toEqual([]);
  }, 240_000);
});
