import { createHash, randomUUID } from "node:crypto";
import { Resolver } from "node:dns/promises";
import { testDnsClient, testSmtpSinkClient } from "@herald/testing";
import { Redis } from "ioredis";
import { dkimVerify } from "mailauth";
import { type ParsedMail, simpleParser } from "mailparser";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { verifiedDomain } from "./support/domains.js";
import { type CreatedProject, createProject, restClient, signUp, uniqueEmail } from "./support/http.js";
import type { Contact, ErrorBody } from "./support/resources.js";

const { stack, dns: dnsServer, smtp, redisUrl } = inject("herald");
const call = restClient(stack.gatewayUrl);
const dns = testDnsClient(dnsServer.controlUrl);
const sink = testSmtpSinkClient(smtp.controlUrl);

type SendAnswer = { success: true; data: { emails: Array<{ contact: { id: string; email: string }; email: string }>; timestamp: string } };

/** The message the stack delivered to this address (waits for it). */
async function received(address: string): Promise<ParsedMail & { raw: string }> {
  const [message] = await sink.waitForMessages(1, { to: address, timeoutMs: 20_000 });
  if (!message) throw new Error(`nothing arrived for ${address}`);
  return Object.assign(await simpleParser(message.raw), { raw: message.raw });
}

describe("POST /v1/send", () => {
  let project: CreatedProject;
  let other: CreatedProject;
  let key: string;
  let domain: string;
  let otherDomain: string;

  beforeAll(async () => {
    project = await createProject(call, (await signUp(call, "send")).cookie, "Send");
    other = await createProject(call, (await signUp(call, "send-other")).cookie, "Other");
    key = project.secretKey;
    [domain, otherDomain] = (
      await Promise.all([verifiedDomain(call, dns, key, "send"), verifiedDomain(call, dns, other.secretKey, "send-other")])
    ).map((verified) => verified.domain) as [string, string];
  });

  const send = (body: Record<string, unknown>, options: { key?: string; headers?: Record<string, string> } = {}) =>
    call<SendAnswer>("POST", "/v1/send", { key: options.key ?? key, body, ...(options.headers ? { headers: options.headers } : {}) });
  const refused = (body: Record<string, unknown>, options: { key?: string; headers?: Record<string, string> } = {}) =>
    call<ErrorBody>("POST", "/v1/send", { key: options.key ?? key, body, ...(options.headers ? { headers: options.headers } : {}) });
  const contactOf = async (id: string) => (await call<Contact>("GET", `/contacts/${id}`, { key })).body;
  const contactsNamed = async (email: string) =>
    (await call<{ data: Contact[] }>("GET", `/contacts?search=${encodeURIComponent(email)}`, { key })).body.data;
  const basic = (overrides: Record<string, unknown> = {}) => ({
    to: uniqueEmail("rcpt"),
    from: `hello@${domain}`,
    subject: "Hello",
    body: "<p>Hello</p>",
    ...overrides,
  });

  it("sends a DKIM-signed email that verifies against the published record, and answers the success body", async () => {
    const to = uniqueEmail("dkim");
    const answer = await send(
      basic({ to, subject: "Welcome aboard", body: "<h1>Hi</h1><p>Your <a href='https://example.com'>account</a></p>" }),
    );
    expect(answer.status).toBe(200);
    expect(answer.body.success).toBe(true);
    expect(answer.body.data.emails).toHaveLength(1);
    const [sent] = answer.body.data.emails;
    expect(sent?.contact.email).toBe(to);
    expect(sent?.email).toMatch(/^[0-9a-f-]{36}$/);
    expect(Number.isNaN(Date.parse(answer.body.data.timestamp))).toBe(false);

    const message = await received(to);
    expect(message.subject).toBe("Welcome aboard");
    expect(message.from?.value[0]?.address).toBe(`hello@${domain}`);
    expect(message.messageId).toMatch(new RegExp(`@${domain.replaceAll(".", "\\.")}>$`));
    expect(message.html).toContain("<h1>Hi</h1>");
    // The plain-text part is generated from the HTML.
    // Tracked: the link goes through the gateway's click redirect.
    expect(message.text?.replace(/\s+/g, " ")).toContain(`Your account [${stack.gatewayUrl}/t/c/`);
    const resolver = new Resolver();
    resolver.setServers([dnsServer.address]);
    const verification = await dkimVerify(Buffer.from(message.raw), {
      resolver: (name: string, type: string) => resolver.resolve(name, type as "TXT"),
      strict: true,
    });
    expect(verification.results.map((result) => result.status?.result)).toEqual(["pass"]);
    expect(verification.results[0]?.signingDomain).toBe(domain);
  });

  it("creates a new recipient unsubscribed, keeps an existing one's state, and applies subscribed when given", async () => {
    const fresh = await send(basic());
    expect((await contactOf(fresh.body.data.emails[0]?.contact.id ?? "")).subscribed).toBe(false);

    const email = uniqueEmail("subscribed");
    const created = await call<Contact>("POST", "/contacts", { key, body: { email } });
    expect(created.body.subscribed).toBe(true);
    await send(basic({ to: email }));
    expect((await contactOf(created.body.id)).subscribed).toBe(true);
    await send(basic({ to: email, subscribed: false }));
    expect((await contactOf(created.body.id)).subscribed).toBe(false);
    const events = await call<{ data: Array<{ name: string }> }>("GET", `/events/contact/${created.body.id}`, { key });
    expect(events.body.data.map((event) => event.name)).toContain("contact.unsubscribed");

    const subscribedNew = await send(basic({ subscribed: true }));
    expect((await contactOf(subscribedNew.body.data.emails[0]?.contact.id ?? "")).subscribed).toBe(true);
  });

  it("accepts to as a string, an object and a list, rendering each recipient with its own data", async () => {
    const [ann, bob, cid] = [uniqueEmail("ann"), uniqueEmail("bob"), uniqueEmail("cid")];
    await call("POST", "/contacts", { key, body: { email: ann, data: { first: "Ann" } } });
    await call("POST", "/contacts", { key, body: { email: bob, data: { first: "Bob" } } });
    const answer = await send(basic({ to: [ann, { name: "Bob B", email: bob }, { email: cid }], body: "<p>Hi {{first ?? 'there'}}</p>" }));
    expect(answer.status).toBe(200);
    expect(answer.body.data.emails.map((sent) => sent.contact.email)).toEqual([ann, bob, cid]);
    expect(new Set(answer.body.data.emails.map((sent) => sent.email)).size).toBe(3);
    expect((await received(ann)).html).toContain("Hi Ann");
    const toBob = await received(bob);
    expect(toBob.html).toContain("Hi Bob");
    expect(toBob.to && !Array.isArray(toBob.to) ? toBob.to.value[0] : undefined).toEqual({ address: bob, name: "Bob B" });
    expect((await received(cid)).html).toContain("Hi there");

    const single = uniqueEmail("object");
    expect((await send(basic({ to: { email: single } }))).status).toBe(200);
    await received(single);
  });

  it("applies the data rules: stored values, one-off values used for this send only, null deletes, reserved keys dropped", async () => {
    const email = uniqueEmail("data");
    await call("POST", "/contacts", { key, body: { email, data: { plan: "free", old: "x" } } });
    const answer = await send(
      basic({
        to: email,
        body: "<p>{{plan}} {{coupon}} {{profile.tier ?? 'none'}} {{email}}</p>",
        data: { plan: "pro", coupon: { value: "SAVE10", persistent: false }, old: null, herald_id: "forged", email: "forged@example.com" },
      }),
    );
    expect(answer.status).toBe(200);
    expect((await received(email)).html).toContain(`pro SAVE10 none ${email}`);
    const contact = await contactOf(answer.body.data.emails[0]?.contact.id ?? "");
    expect(contact.data).toEqual({ plan: "pro" });
  });

  it("renders with the SPEC.md rules, including the generated links and fields with spaces", async () => {
    const email = uniqueEmail("render");
    const answer = await send(
      basic({
        to: email,
        subject: '{{ "first name" }} {{first name | upcase}}',
        body: '<p>{{data["first name"] | capitalize}} {% if vip %}VIP{% endif %} <a href="{{unsubscribeUrl}}">unsubscribe</a> {{manageUrl}}</p>',
        data: { "first name": "zoe", vip: true },
      }),
    );
    expect(answer.status).toBe(200);
    const message = await received(email);
    expect(message.subject).toBe("first name ZOE");
    expect(message.html).toContain("Zoe VIP");
    // The links point at the gateway (PUBLIC_URL).
    expect(message.html).toContain(`href="${stack.gatewayUrl}/unsubscribe/`);
    expect(message.html).toMatch(/\/manage\/[A-Za-z0-9_-]{40,}/);
  });

  it("takes subject, body, sender and reply-to from a template, explicit fields overriding", async () => {
    const template = await call<{ id: string }>("POST", "/templates", {
      key,
      body: {
        name: "Receipt",
        subject: "Receipt for {{order}}",
        body: "<p>Order {{order}} total {{total}}</p>",
        from: `billing@${domain}`,
        fromName: "Billing",
        replyTo: `support@${domain}`,
        type: "TRANSACTIONAL",
      },
    });
    expect(template.status).toBe(201);
    const plain = uniqueEmail("tpl");
    const answer = await send({ to: plain, template: template.body.id, data: { order: "A-1", total: 12 } });
    expect(answer.status).toBe(200);
    const message = await received(plain);
    expect(message.subject).toBe("Receipt for A-1");
    expect(message.html).toContain("Order A-1 total 12");
    expect(message.from?.value[0]).toEqual({ address: `billing@${domain}`, name: "Billing" });
    expect(message.replyTo?.value[0]?.address).toBe(`support@${domain}`);

    const overridden = uniqueEmail("tpl-override");
    const second = await send({
      to: overridden,
      template: template.body.id,
      subject: "Your receipt",
      from: { name: "Shop", email: `shop@${domain}` },
      reply: `help@${domain}`,
      data: { order: "B-2", total: 3 },
    });
    expect(second.status).toBe(200);
    const overriddenMessage = await received(overridden);
    expect(overriddenMessage.subject).toBe("Your receipt");
    expect(overriddenMessage.html).toContain("Order B-2");
    expect(overriddenMessage.from?.value[0]).toEqual({ address: `shop@${domain}`, name: "Shop" });
    expect(overriddenMessage.replyTo?.value[0]?.address).toBe(`help@${domain}`);

    expect((await refused({ to: plain, template: randomUUID() })).status).toBe(404);
    const invalidId = await refused({ to: plain, template: "not-a-uuid" });
    expect(invalidId.status).toBe(422);
    expect(invalidId.body.error.errors?.[0]?.field).toBe("template");
    // Another project's template is not found with this project's key.
    expect((await refused({ to: plain, template: template.body.id }, { key: other.secretKey })).status).toBe(404);
  });

  it("uses the deprecated name only beside a from given as a string", async () => {
    const [first, second] = [uniqueEmail("name"), uniqueEmail("name-object")];
    await send(basic({ to: first, from: `team@${domain}`, name: "The Team" }));
    expect((await received(first)).from?.value[0]).toEqual({ address: `team@${domain}`, name: "The Team" });
    await send(basic({ to: second, from: { email: `team@${domain}` }, name: "Ignored" }));
    expect((await received(second)).from?.value[0]?.name).toBe("");
  });

  it("delivers custom headers and attachments", async () => {
    const email = uniqueEmail("attach");
    const pdf = Buffer.from("%PDF-1.4 a tiny document");
    const answer = await send(
      basic({
        to: email,
        headers: { "X-Order-Id": "A-42" },
        attachments: [{ filename: "invoice.pdf", content: pdf.toString("base64"), contentType: "application/pdf" }],
      }),
    );
    expect(answer.status).toBe(200);
    const message = await received(email);
    expect(message.headers.get("x-order-id")).toBe("A-42");
    expect(message.attachments).toHaveLength(1);
    expect(message.attachments[0]?.filename).toBe("invoice.pdf");
    expect(message.attachments[0]?.contentType).toBe("application/pdf");
    expect(Buffer.compare(message.attachments[0]?.content ?? Buffer.alloc(0), pdf)).toBe(0);
  });

  it.each([
    ["a missing to", { to: undefined }, "to"],
    ["an empty list of recipients", { to: [] }, "to"],
    ["an invalid recipient", { to: "not-an-address" }, "to"],
    ["an invalid recipient in a list", { to: [uniqueEmail(), "nope"] }, "to[1]"],
    ["a missing subject", { subject: undefined }, "subject"],
    ["an empty subject", { subject: "" }, "subject"],
    ["a subject of 999 characters", { subject: "s".repeat(999) }, "subject"],
    ["a subject with a newline", { subject: "Hello\nBcc: x@example.com" }, "subject"],
    ["a missing body", { body: undefined }, "body"],
    ["an empty body", { body: "" }, "body"],
    ["a missing from", { from: undefined }, "from"],
    ["an invalid from", { from: "nobody" }, "from"],
    ["a header value with CR LF", { headers: { "X-Test": "a\r\nBcc: x@example.com" } }, "headers.X-Test"],
    ["a header name with LF", { headers: { "X-\nTest": "a" } }, "headers.X-\nTest"],
    ["a header value of 999 characters", { headers: { "X-Long": "v".repeat(999) } }, "headers.X-Long"],
    ["a Resent-From header", { headers: { "Resent-From": "boss@example.com" } }, "headers.Resent-From"],
    ["an Authentication-Results header", { headers: { "Authentication-Results": "mx; dkim=pass" } }, "headers.Authentication-Results"],
    ["an ARC-Seal header", { headers: { "ARC-Seal": "i=1; cv=none" } }, "headers.ARC-Seal"],
    ["an invalid reply", { reply: "not-an-address" }, "reply"],
    [
      "eleven attachments",
      { attachments: Array.from({ length: 11 }, (_, index) => ({ filename: `${index}.txt`, content: "aGk=", contentType: "text/plain" })) },
      "attachments",
    ],
    [
      "attachments over 10 MB together",
      {
        attachments: [
          { filename: "a.bin", content: Buffer.alloc(6 * 1024 * 1024).toString("base64"), contentType: "application/octet-stream" },
          { filename: "b.bin", content: Buffer.alloc(5 * 1024 * 1024).toString("base64"), contentType: "application/octet-stream" },
        ],
      },
      "attachments",
    ],
    [
      "an attachment that is not base64",
      { attachments: [{ filename: "a.txt", content: "**", contentType: "text/plain" }] },
      "attachments[0].content",
    ],
    ["a body that is not valid Liquid", { body: "<p>\n{{ name | nosuchfilter }}</p>" }, "body"],
  ])("refuses %s with 422 naming the field, and sends nothing", async (_label, overrides, field) => {
    const to = uniqueEmail("refused");
    const body = basic({ to, ...overrides });
    for (const [name, value] of Object.entries(body)) if (value === undefined) delete (body as Record<string, unknown>)[name];
    const answer = await refused(body);
    expect(answer.status).toBe(422);
    expect(answer.body.error.code).toBe("VALIDATION_ERROR");
    expect(answer.body.error.errors?.map((error) => error.field)).toContain(field);
    const lookup = await call<{ data: Contact[] }>("GET", `/contacts?search=${encodeURIComponent(to)}`, { key });
    expect(lookup.body.data).toEqual([]);
  });

  it("names the line of a Liquid error", async () => {
    const answer = await refused(basic({ body: "<p>one</p>\n<p>{{ name | nosuchfilter }}</p>" }));
    expect(answer.status).toBe(422);
    expect(answer.body.error.message).toMatch(/line 2/);
  });

  it("refuses a sender whose domain is not verified for the project with 403", async () => {
    const unverified = await refused(basic({ from: `hello@unverified-${randomUUID().slice(0, 8)}.herald.test` }));
    expect(unverified.status).toBe(403);
    expect(unverified.body.error.message).toMatch(/unverified-.*not verified/);
    // Another project's verified domain is not this project's.
    const foreign = await refused(basic({ from: `hello@${otherDomain}` }));
    expect(foreign.status).toBe(403);
  });

  it("needs a secret key", async () => {
    expect((await refused(basic(), { key: project.publicKey })).status).toBe(401);
    expect((await call("POST", "/v1/send", { body: basic() })).status).toBe(401);
  });

  it("refuses a reused Idempotency-Key with 409 and sends the email once", async () => {
    const to = uniqueEmail("idem");
    const headers = { "Idempotency-Key": `send-${randomUUID()}` };
    expect((await send(basic({ to }), { headers })).status).toBe(200);
    const again = await refused(basic({ to }), { headers });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("IDEMPOTENCY_KEY_REUSED");
    await received(to);
    // Give a duplicate time to show up if one had been queued.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await sink.messages(to)).toHaveLength(1);
  });

  it("answers concurrent sends each on its own, though they share calls to delivery and contacts", async () => {
    const accepted = Array.from({ length: 8 }, () => uniqueEmail("together"));
    const answers = await Promise.all([
      ...accepted.map((to, index) => send(basic({ to, subject: `Together {{n}}`, data: { n: index } }))),
      refused(basic({ from: `hello@${otherDomain}` })),
      refused(basic({ subject: "two\nlines" })),
      refused(basic({ body: "{{ n | nosuchfilter }}" })),
      // Another project's key in the same turn reaches only its own domains.
      refused(basic({ to: uniqueEmail("together-other") }), { key: other.secretKey }),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 403, 422, 422, 403]);
    for (const [index, to] of accepted.entries()) {
      const [sent] = (answers[index] as { body: SendAnswer }).body.data.emails;
      expect(sent?.contact.email).toBe(to);
      expect((await contactOf(sent?.contact.id ?? "")).email).toBe(to);
      expect((await received(to)).subject).toBe(`Together ${index}`);
    }
  });

  it("refuses an address that bounced for good in this project, and only in this project", async () => {
    const to = uniqueEmail("bounce");
    await sink.rejectRecipient(to, { code: 550, message: "5.1.1 no such user" });
    try {
      const first = await send(basic({ to }));
      expect(first.status).toBe(200);
      const deadline = Date.now() + 20_000;
      let answer = await refused(basic({ to }));
      while (answer.status === 200 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        answer = await refused(basic({ to }));
      }
      expect(answer.status).toBe(400);
      expect(answer.body.error.code).toBe("RECIPIENT_SUPPRESSED");
      expect(answer.body.error.details).toEqual({ email: to });
      // The other project never sent to it: not suppressed there.
      expect((await send(basic({ to, from: `hello@${otherDomain}` }), { key: other.secretKey })).status).toBe(200);
    } finally {
      await sink.acceptRecipient(to);
    }
  });

  describe("Idempotency-Key", () => {
    const redis = new Redis(redisUrl, { lazyConnect: true });
    afterAll(() => redis.quit());

    it("accepts a key of 255 characters", async () => {
      const to = uniqueEmail("idem-long");
      const headers = { "Idempotency-Key": `${randomUUID()}${"k".repeat(219)}` };
      expect(headers["Idempotency-Key"]).toHaveLength(255);
      expect((await send(basic({ to: [to, uniqueEmail("idem-long")] }), { headers })).status).toBe(200);
      await received(to);
    });

    it("treats a key used again after it expired as a new request", async () => {
      const key = `expiring-${randomUUID()}`;
      const headers = { "Idempotency-Key": key };
      const [first, second] = [uniqueEmail("idem-first"), uniqueEmail("idem-second")];
      const before = await send(basic({ to: first }), { headers });
      expect(before.status).toBe(200);
      // The gateway's record of the key lapses after IDEMPOTENCY_TTL_HOURS; here it is made to lapse now.
      expect(await redis.del(`herald:idempotency:${project.id}:${createHash("sha256").update(key).digest("hex")}`)).toBe(1);
      const after = await send(basic({ to: second, subject: "Second" }), { headers });
      expect(after.status).toBe(200);
      expect(after.body.data.emails[0]?.email).not.toBe(before.body.data.emails[0]?.email);
      expect((await received(second)).subject).toBe("Second");
    });
  });

  it("refuses a display name the queue would refuse before any contact is written", async () => {
    const to = uniqueEmail("long-name");
    const answer = await refused(basic({ to: { email: to, name: "n".repeat(321) } }));
    expect(answer.status).toBe(422);
    expect(answer.body.error.errors?.map((error) => error.field)).toEqual(["to.name"]);
    expect(await contactsNamed(to)).toEqual([]);
    const fromName = await refused(basic({ from: { email: `hello@${domain}`, name: "a\u0000b" } }));
    expect(fromName.status).toBe(422);
    expect(fromName.body.error.errors?.map((error) => error.field)).toEqual(["from.name"]);
  });

  it("refuses more than 100 custom headers", async () => {
    const headers = Object.fromEntries(Array.from({ length: 101 }, (_, index) => [`X-Custom-${index}`, "v"]));
    const answer = await refused(basic({ headers }));
    expect(answer.status).toBe(422);
    expect(answer.body.error.errors).toEqual([expect.objectContaining({ field: "headers", code: "too_big" })]);
  });

  it("refuses attachments that would be stored over 40 MB for all recipients, before any contact is written", async () => {
    const recipients = Array.from({ length: 5 }, () => uniqueEmail("stored"));
    const content = Buffer.alloc(9 * 1024 * 1024, 7).toString("base64");
    const answer = await refused(
      basic({ to: recipients, attachments: [{ filename: "big.bin", content, contentType: "application/octet-stream" }] }),
    );
    expect(answer.status).toBe(422);
    expect(answer.body.error.errors).toEqual([expect.objectContaining({ field: "attachments", code: "too_big" })]);
    expect(await contactsNamed(recipients[0] ?? "")).toEqual([]);
  });

  it("refuses a NUL character anywhere in the request before any contact is written", async () => {
    const to = uniqueEmail("nul");
    const answer = await refused(basic({ to, body: "<p>a\u0000b</p>" }));
    expect(answer.status).toBe(422);
    expect(answer.body.error.errors).toEqual([expect.objectContaining({ field: "body", code: "invalid_string" })]);
    expect(await contactsNamed(to)).toEqual([]);
  });

  it("names body when the body renders to nothing", async () => {
    const answer = await refused(basic({ body: "{{ nothing }}" }));
    expect(answer.status).toBe(422);
    expect(answer.body.error.errors).toEqual([expect.objectContaining({ field: "body", code: "too_small" })]);
  });

  it("sends from a verified internationalised domain given as typed", async () => {
    const idn = await verifiedDomain(call, dns, key, "bücher");
    const to = uniqueEmail("idn");
    const answer = await send(basic({ to, from: `Bücher <hello@${idn.domain}>` }));
    expect(answer.status).toBe(200);
    const message = await received(to);
    expect(message.from?.value[0]?.name).toBe("Bücher");
    // On the wire in its xn-- form, as the domain was verified; a parser shows it in Unicode again.
    expect(message.raw).toMatch(new RegExp(`^From: .*<hello@${idn.dkim.name.split("._domainkey.")[1]}>`, "m"));
    expect(message.from?.value[0]?.address).toBe(`hello@${idn.domain}`);
  });
});
