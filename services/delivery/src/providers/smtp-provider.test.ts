import { randomUUID } from "node:crypto";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestSmtpSink, type TestSmtpSink, testSmtpSinkClient } from "@herald/testing";
import { simpleParser } from "mailparser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failureOf, outgoingEmail, testDomain, testSelector, testSigning } from "../test-support/provider-fixture.js";
import type { DkimSigningKey, MailProvider } from "./mail-provider.js";
import type { OutgoingEmail } from "./message.js";
import { classifySmtpError, createSmtpProvider } from "./smtp-provider.js";

const domain = testDomain;
const selector = testSelector;
let sink: TestSmtpSink;
let provider: MailProvider;
let dkim: DkimSigningKey;
let dkimResultOf: Awaited<ReturnType<typeof testSigning>>["dkimResultOf"];

beforeAll(async () => {
  sink = await startTestSmtpSink();
  // Through a build thread, as a delivery process builds (message-builder.test.ts compares threads with none).
  provider = createSmtpProvider({ url: sink.url, maxConnections: 5, buildThreads: 1 });
  ({ dkim, dkimResultOf } = await testSigning());
});

afterAll(async () => {
  await provider?.close();
  await sink?.stop();
});

async function sendAndReceive(email: OutgoingEmail) {
  const result = await provider.send(email, dkim);
  const [received] = await sink.waitForMessages(1, { to: email.to.email });
  if (!received) throw new Error("nothing received");
  return { result, received };
}

describe("SMTP provider", () => {
  it("delivers the message with its headers, both parts and its attachment", async () => {
    const pdf = Buffer.from("%PDF-1.4 an invoice\n");
    const email = outgoingEmail({
      replyTo: { email: "support@example.com", name: "Support" },
      headers: { "X-Campaign": "spring-sale", "X-Entity-Ref-ID": "1234" },
      attachments: [{ filename: "invoice-1234.pdf", content: pdf, contentType: "application/pdf" }],
      listUnsubscribe: { url: "https://herald.example/unsubscribe/t0k3n", mailto: `unsubscribe@${domain}` },
    });
    const { result, received } = await sendAndReceive(email);

    expect(result.providerMessageId).toMatch(new RegExp(`^<[0-9a-f-]{36}@${domain.replaceAll(".", "\\.")}>$`));
    expect(result.response).toMatch(/^250 /);
    expect(received.from).toBe(`orders@${domain}`);
    expect(received.to).toEqual([email.to.email]);

    const parsed = await simpleParser(received.raw);
    // Unfolded (RFC 5322 section 2.2.3): long values may arrive on several lines.
    const header = (name: string) =>
      parsed.headerLines.filter((line) => line.key === name).map((line) => line.line.replaceAll(/\r?\n(?=[ \t])/g, ""));
    expect(parsed.messageId).toBe(result.providerMessageId);
    expect(parsed.subject).toBe("Order 1234 has shipped");
    expect(parsed.from?.value).toEqual([{ address: `orders@${domain}`, name: "Example Shop" }]);
    expect(parsed.replyTo?.value).toEqual([{ address: "support@example.com", name: "Support" }]);
    expect(header("x-herald-email-id")).toEqual([`X-Herald-Email-ID: ${email.emailId}`]);
    expect(header("x-campaign")).toEqual(["X-Campaign: spring-sale"]);
    expect(header("x-entity-ref-id")).toEqual(["X-Entity-Ref-ID: 1234"]);
    expect(header("list-unsubscribe")).toEqual([
      `List-Unsubscribe: <https://herald.example/unsubscribe/t0k3n>, <mailto:unsubscribe@${domain}>`,
    ]);
    expect(header("list-unsubscribe-post")).toEqual(["List-Unsubscribe-Post: List-Unsubscribe=One-Click"]);
    expect(header("x-mailer")).toEqual([]);
    expect(parsed.html).toContain("Order 1234 is on its way.");
    expect(parsed.text).toContain("Order 1234 is on its way. Track it [https://shop.example/track/1234].");
    expect(parsed.attachments).toHaveLength(1);
    expect(parsed.attachments[0]?.filename).toBe("invoice-1234.pdf");
    expect(parsed.attachments[0]?.contentType).toBe("application/pdf");
    expect(parsed.attachments[0]?.content.equals(pdf)).toBe(true);

    // RFC 8058: the signature covers both List-Unsubscribe headers.
    const signature = header("dkim-signature").join("").replaceAll(/\s+/g, "");
    expect(signature).toMatch(/;h=[^;]*list-unsubscribe:list-unsubscribe-post/i);
    expect(signature).toContain(`d=${domain};`);
    expect(signature).toContain(`s=${selector};`);
    expect(await dkimResultOf(received.raw)).toBe("pass");
  });

  it("signs every message so that it verifies against the domain's published record, and tampering fails it", async () => {
    const { received } = await sendAndReceive(outgoingEmail());
    expect(await dkimResultOf(received.raw)).toBe("pass");

    const bodyStart = received.raw.indexOf("\r\n\r\n");
    const body = received.raw.slice(bodyStart);
    expect(body).toContain("Order 1234");
    expect(await dkimResultOf(received.raw.slice(0, bodyStart) + body.replace("Order 1234", "Order 9999"))).toBe("fail");
    const headers = received.raw.slice(0, bodyStart);
    expect(headers).toContain("Subject: Order 1234 has shipped");
    expect(await dkimResultOf(headers.replace("Subject: Order 1234", "Subject: Order 9999") + body)).toBe("fail");
  });

  it("sends nothing with a DKIM key that cannot sign, as a permanent failure", async () => {
    const email = outgoingEmail();
    const failure = await failureOf(
      provider.send(email, { ...dkim, privateKey: "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----" }),
    );
    expect(failure).toMatchObject({ kind: "permanent", reason: "dkim-key", recipientRejected: false });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(sink.messages(email.to.email)).toEqual([]);
  });

  it("refuses a header with a line break as a permanent failure, before anything is sent", async () => {
    const email = outgoingEmail({ headers: { "X-Campaign": "spring\r\nBcc: everyone@example.org" } });
    const failure = await failureOf(provider.send(email, dkim));
    expect(failure).toMatchObject({ kind: "permanent", reason: "invalid-message", recipientRejected: false });
    expect(sink.messages(email.to.email)).toEqual([]);
  });

  it("reports a recipient refused with 550 as a permanent failure of the address", async () => {
    const email = outgoingEmail();
    // No enhanced status: the refused RCPT TO alone blames the address.
    sink.rejectRecipient(email.to.email, { code: 550, message: "no such user here" });
    const failure = await failureOf(provider.send(email, dkim));
    expect(failure).toMatchObject({ kind: "permanent", reason: "rejected", recipientRejected: true, responseCode: 550 });
    expect(failure.enhancedStatus).toBeUndefined();
    expect(failure.response).toBe("550 no such user here");
    expect(sink.messages(email.to.email)).toEqual([]);

    // The pooled connection goes on: the next recipient is delivered.
    const next = outgoingEmail();
    await sendAndReceive(next);
  });

  it("reports a recipient refused with 451 as a temporary failure, and delivers once the server accepts again", async () => {
    const email = outgoingEmail();
    sink.rejectRecipient(email.to.email, { code: 451, message: "4.3.0 try again later" });
    const failure = await failureOf(provider.send(email, dkim));
    expect(failure).toMatchObject({ kind: "temporary", reason: "rejected", recipientRejected: false, responseCode: 451 });

    sink.acceptRecipient(email.to.email);
    await sendAndReceive(email);
    expect(sink.messages(email.to.email)).toHaveLength(1);
  });

  it("reports a relay that is not listening as a temporary connection failure", async () => {
    const closed = await freePort();
    const unreachable = createSmtpProvider({ url: `smtp://user:pass@127.0.0.1:${closed}`, connectionTimeoutMs: 2_000 });
    try {
      const failure = await failureOf(unreachable.send(outgoingEmail(), dkim));
      expect(failure).toMatchObject({ kind: "temporary", reason: "connection" });
    } finally {
      await unreachable.close();
    }
  });

  it("reports a relay that never greets as a temporary timeout", async () => {
    const sockets = new Set<Socket>();
    // Accepts connections and says nothing.
    const silent = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const stalled = createSmtpProvider({ url: `smtp://127.0.0.1:${portOf(silent)}`, greetingTimeoutMs: 300 });
    try {
      const failure = await failureOf(stalled.send(outgoingEmail(), dkim));
      expect(failure).toMatchObject({ kind: "temporary", reason: "timeout" });
    } finally {
      await stalled.close();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it("sends 200 messages through the pool, each arriving exactly once and signed", async () => {
    const pooled = createSmtpProvider({ url: sink.url, maxConnections: 5 });
    const recipient = `burst-${randomUUID()}@example.org`;
    const emails = Array.from({ length: 200 }, () => outgoingEmail({ to: { email: recipient } }));
    try {
      const results = await Promise.all(emails.map((email) => pooled.send(email, dkim)));
      expect(new Set(results.map((result) => result.providerMessageId)).size).toBe(200);
      const received = await sink.waitForMessages(200, { to: recipient });
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(sink.messages(recipient)).toHaveLength(200);
      const ids = received.map((message) => /^X-Herald-Email-ID: (.+)$/m.exec(message.raw)?.[1]?.trim());
      expect(new Set(ids)).toEqual(new Set(emails.map((email) => email.emailId)));
      expect(await dkimResultOf(received[199]?.raw ?? "")).toBe("pass");
    } finally {
      await pooled.close();
    }
  });

  it("finishes the sends in flight when closed, and refuses later ones as temporary", async () => {
    const closing = createSmtpProvider({ url: sink.url });
    const email = outgoingEmail();
    const sending = closing.send(email, dkim);
    await closing.close();
    await expect(sending).resolves.toMatchObject({ response: expect.stringMatching(/^250 /) });
    expect(sink.messages(email.to.email)).toHaveLength(1);
    const failure = await failureOf(closing.send(outgoingEmail(), dkim));
    expect(failure).toMatchObject({ kind: "temporary", reason: "closed" });
  });
});

describe("SMTP failure classification", () => {
  const smtpError = (fields: Record<string, unknown>) => Object.assign(new Error("smtp said no"), fields);

  it.each([
    [{ code: "EENVELOPE", command: "RCPT TO", responseCode: 550, response: "550 5.1.1 user unknown" }, "permanent", true],
    [{ code: "EMESSAGE", command: "DATA", responseCode: 550, response: "550 5.1.1 user unknown" }, "permanent", true],
    [{ code: "EMESSAGE", command: "DATA", responseCode: 550, response: "550 5.2.1 mailbox disabled" }, "permanent", true],
    [{ code: "EMESSAGE", command: "DATA", responseCode: 554, response: "554 5.7.1 message refused as spam" }, "permanent", false],
    [{ code: "EENVELOPE", command: "MAIL FROM", responseCode: 553, response: "553 5.7.1 sender not allowed" }, "permanent", false],
    [{ code: "EPROTOCOL", command: "RCPT TO", responseCode: 503, response: "503 5.5.1 bad sequence of commands" }, "temporary", false],
    [{ code: "EENVELOPE", command: "RCPT TO", responseCode: 452, response: "452 4.2.2 mailbox full" }, "temporary", false],
    [{ code: "EMESSAGE", command: "DATA", responseCode: 421, response: "421 4.3.2 shutting down" }, "temporary", false],
    [{ code: "EAUTH", command: "AUTH PLAIN", responseCode: 535, response: "535 5.7.8 bad credentials" }, "temporary", false],
    [{ code: "ESOCKET", originalCode: "ECONNRESET" }, "temporary", false],
    [{ code: "ETIMEDOUT" }, "temporary", false],
    [{ code: "EENVELOPE" }, "permanent", false],
  ] as const)("reads %j as %s", (fields, kind, recipientRejected) => {
    const failure = classifySmtpError(smtpError(fields));
    expect(failure.kind).toBe(kind);
    expect(failure.recipientRejected).toBe(recipientRejected);
    expect(failure.cause).toBeInstanceOf(Error);
  });
});

describe("test SMTP sink", () => {
  it("is read and steered from another process through its control port, and keeps messages in a directory", async () => {
    const directory = await mkdtemp(join(tmpdir(), "herald-sink-"));
    const own = await startTestSmtpSink({ directory });
    const client = testSmtpSinkClient(own.controlUrl);
    const sender = createSmtpProvider({ url: own.url });
    try {
      const refused = outgoingEmail();
      await client.rejectRecipient(refused.to.email, { code: 550 });
      expect((await failureOf(sender.send(refused, dkim))).kind).toBe("permanent");
      await client.acceptRecipient(refused.to.email);

      const email = outgoingEmail();
      await sender.send(email, dkim);
      const [received] = await client.waitForMessages(1, { to: email.to.email });
      expect(received?.to).toEqual([email.to.email]);
      expect(await dkimResultOf(received?.raw ?? "")).toBe("pass");
      expect(await readdir(directory)).toEqual(["1.eml", "index.jsonl"]);
      expect(await readFile(join(directory, "1.eml"), "utf8")).toBe(received?.raw);

      await client.clear();
      expect(await client.messages()).toEqual([]);
    } finally {
      await sender.close();
      await own.stop();
      await rm(directory, { recursive: true, force: true });
    }
  });
});

function portOf(server: Server): number {
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("not listening on a port");
  return address.port;
}

/** A port that nothing listens on: taken from the system, then given back. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = portOf(server);
  await new Promise((resolve) => server.close(resolve));
  return port;
}
