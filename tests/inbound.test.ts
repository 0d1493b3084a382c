import { testDnsClient, waitUntil } from "@herald/testing";
import { createTransport } from "nodemailer";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { uniqueDomain, verifiedDomain } from "./support/domains.js";
import { type CreatedProject, consumerLagMs, createProject, restClient, type SignedInUser, signUp, uniqueEmail } from "./support/http.js";
import type { Contact, ErrorBody } from "./support/resources.js";

const { stack, dns: dnsServer, inboundSmtp } = inject("herald");
const call = restClient(stack.gatewayUrl);

const dns = testDnsClient(dnsServer.controlUrl);

type Received = {
  id: string;
  type: string;
  emailId: string;
  contactId: string | null;
  recipient: string;
  category: string;
  subject: string | null;
  sender: string | null;
  inReplyTo: string | null;
};
type Settings = { enabled: boolean; mxHost: string | null };
type Consumption = { consumption: Record<string, number> };

/** Another mail server delivering to the inbound listener, as the domain's MX record sends it there. */
const senderMta = createTransport({ host: "127.0.0.1", port: inboundSmtp.port, secure: false, ignoreTLS: true });

function deliver(message: {
  from: string;
  to: string | string[];
  subject: string;
  text?: string;
  inReplyTo?: string;
  references?: string;
}) {
  return senderMta.sendMail({ text: "Hello there", ...message });
}

/** The SMTP reply code a delivery was refused with; undefined when it was accepted. */
const refusal = (sending: Promise<unknown>) =>
  sending.then(
    () => undefined,
    (error: { responseCode?: number }) => error.responseCode,
  );

describe("receiving mail (issue 19, item 6)", () => {
  let owner: SignedInUser;
  let project: CreatedProject;
  let domain: string;

  async function receivedIn(key: string, count: number): Promise<Received[]> {
    let found: Received[] = [];
    await waitUntil(
      async () => {
        found = (await call<{ data: Received[] }>("GET", "/activity?type=email.received&limit=100", { key })).body.data;
        return found.length >= count;
      },
      { timeoutMs: 30_000 },
    );
    return found;
  }

  beforeAll(async () => {
    owner = await signUp(call, "receiver");
    project = await createProject(call, owner.cookie, "Receiving");
    ({ domain } = await verifiedDomain(call, dns, project.secretKey, "inbound"));
    await dns.setMx(domain, [{ priority: 10, exchange: inboundSmtp.mxHost }]);
  });

  it("is off by default, and an admin switches it on", async () => {
    const initial = await call<Settings>("GET", "/settings/inbound", { key: project.secretKey });
    expect(initial.status).toBe(200);
    expect(initial.body).toEqual({ enabled: false, mxHost: inboundSmtp.mxHost });
    // Off: the domain's mail is refused for good.
    expect(await refusal(deliver({ from: uniqueEmail("early"), to: `support@${domain}`, subject: "Too early" }))).toBe(550);

    const invalid = await call<ErrorBody>("PUT", "/settings/inbound", { key: project.secretKey, body: { enabled: "yes" } });
    expect(invalid.status).toBe(422);
    const on = await call<Settings>("PUT", "/settings/inbound", { key: project.secretKey, body: { enabled: true } });
    expect(on.status).toBe(200);
    expect(on.body).toEqual({ enabled: true, mxHost: inboundSmtp.mxHost });
  });

  it("records a message on its sender's new, unsubscribed contact, in the feed, on the timeline and in billing", async () => {
    await call("PUT", "/settings/inbound", { key: project.secretKey, body: { enabled: true } });
    const sender = uniqueEmail("customer");
    const accepted = await deliver({ from: `Customer <${sender}>`, to: `Support@${domain}`, subject: "Where is my order?" });
    expect(accepted.response).toMatch(/^250/);

    const [received] = (await receivedIn(project.secretKey, 1)).filter((item) => item.sender === sender);
    expect(received).toMatchObject({
      type: "email.received",
      category: "INBOUND",
      recipient: `support@${domain}`,
      subject: "Where is my order?",
      sender,
      inReplyTo: null,
    });
    const contact = await call<Contact>("GET", `/contacts/${received?.contactId}`, { key: project.secretKey });
    expect(contact.body).toMatchObject({ email: sender, subscribed: false });

    // Published on herald.email-activity.v1: contacts puts it on the timeline, identity meters it as inbound.
    await waitUntil(
      async () =>
        (
          await call<{ data: Array<{ name: string }> }>("GET", `/events/contact/${received?.contactId}`, { key: project.secretKey })
        ).body.data.some((event) => event.name === "email.received"),
      { timeoutMs: consumerLagMs },
    );
    const consumption = `/users/@me/projects/${project.id}/billing-consumption`;
    await waitUntil(async () => (await call<Consumption>("GET", consumption, { cookie: owner.cookie })).body.consumption.inbound === 1, {
      timeoutMs: consumerLagMs,
    });
  }, 120_000);

  it("keeps an existing contact's subscription, and links a reply to the email it answers", async () => {
    await call("PUT", "/settings/inbound", { key: project.secretKey, body: { enabled: true } });
    const customer = uniqueEmail("subscriber");
    const created = await call<Contact>("POST", "/contacts", { key: project.secretKey, body: { email: customer } });
    expect(created.body.subscribed).toBe(true);
    const sent = await call<{ data: { emails: Array<{ email: string }> } }>("POST", "/v1/send", {
      key: project.secretKey,
      body: { to: customer, from: `hello@${domain}`, subject: "Your order", body: "<p>Shipped</p>" },
    });
    const emailId = sent.body.data.emails[0]?.email ?? "";
    expect(emailId).not.toBe("");

    await deliver({ from: customer, to: `hello@${domain}`, subject: "Re: Your order", inReplyTo: `<${emailId}@${domain}>` });
    // References naming an email of another project, or none of ours, link nothing.
    await deliver({ from: customer, to: `hello@${domain}`, subject: "Another", references: "<not-ours@elsewhere.test>" });

    await waitUntil(async () => (await receivedIn(project.secretKey, 1)).filter((item) => item.sender === customer).length === 2, {
      timeoutMs: 30_000,
    });
    const both = (await receivedIn(project.secretKey, 1)).filter((item) => item.sender === customer);
    expect(both.find((item) => item.subject === "Re: Your order")?.inReplyTo).toBe(emailId);
    expect(both.find((item) => item.subject === "Another")?.inReplyTo).toBeNull();
    expect(both.every((item) => item.contactId === created.body.id)).toBe(true);
    expect((await call<Contact>("GET", `/contacts/${created.body.id}`, { key: project.secretKey })).body.subscribed).toBe(true);
  });

  it("records a message resent after a lost answer once", async () => {
    await call("PUT", "/settings/inbound", { key: project.secretKey, body: { enabled: true } });
    const sender = uniqueEmail("retrier");
    const message = { from: sender, to: `orders@${domain}`, subject: "Twice", messageId: `<twice-${sender}>` };
    await senderMta.sendMail(message);
    await senderMta.sendMail(message);
    await receivedIn(project.secretKey, 1);
    // A later message from the same sender shows the first was processed; the repeat left nothing.
    await deliver({ from: sender, to: `orders@${domain}`, subject: "After" });
    await waitUntil(
      async () => (await receivedIn(project.secretKey, 1)).some((item) => item.sender === sender && item.subject === "After"),
      {
        timeoutMs: 30_000,
      },
    );
    expect((await receivedIn(project.secretKey, 1)).filter((item) => item.sender === sender && item.subject === "Twice")).toHaveLength(1);
  });

  it("receives a subdomain whose MX points here, and refuses mail no project receives with 550", async () => {
    await call("PUT", "/settings/inbound", { key: project.secretKey, body: { enabled: true } });
    const sub = `reply.${domain}`;
    await dns.setMx(sub, [{ priority: 10, exchange: inboundSmtp.mxHost }]);
    const sender = uniqueEmail("sub");
    expect((await deliver({ from: sender, to: `x@${sub}`, subject: "Subdomain" })).response).toMatch(/^250/);
    await waitUntil(async () => (await receivedIn(project.secretKey, 1)).some((item) => item.sender === sender), { timeoutMs: 30_000 });

    // A subdomain whose MX points elsewhere: its owner did not send its mail here.
    const elsewhere = `other.${domain}`;
    await dns.setMx(elsewhere, [{ priority: 10, exchange: "mx.elsewhere.test" }]);
    expect(await refusal(deliver({ from: sender, to: `x@${elsewhere}`, subject: "No" }))).toBe(550);
    // A domain no project verified, with its MX pointing here all the same.
    const stranger = uniqueDomain("stranger");
    await dns.setMx(stranger, [{ priority: 10, exchange: inboundSmtp.mxHost }]);
    expect(await refusal(deliver({ from: sender, to: `x@${stranger}`, subject: "No" }))).toBe(550);
  });

  it("keeps one project's received mail from another's key, and its switch from another project", async () => {
    await call("PUT", "/settings/inbound", { key: project.secretKey, body: { enabled: true } });
    const other = await createProject(call, (await signUp(call, "bystander")).cookie, "Bystander");
    const sender = uniqueEmail("private");
    await deliver({ from: sender, to: `private@${domain}`, subject: "Private" });
    await waitUntil(async () => (await receivedIn(project.secretKey, 1)).some((item) => item.sender === sender), { timeoutMs: 30_000 });
    const theirs = await call<{ data: Received[] }>("GET", "/activity?type=email.received", { key: other.secretKey });
    expect(theirs.body.data).toEqual([]);
    expect((await call<Settings>("GET", "/settings/inbound", { key: other.secretKey })).body.enabled).toBe(false);
  });

  it("refuses the domain again once receiving is switched off", async () => {
    await call("PUT", "/settings/inbound", { key: project.secretKey, body: { enabled: false } });
    expect(await refusal(deliver({ from: uniqueEmail("late"), to: `support@${domain}`, subject: "Off" }))).toBe(550);
    await call("PUT", "/settings/inbound", { key: project.secretKey, body: { enabled: true } });
  });
});
