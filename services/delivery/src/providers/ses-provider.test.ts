import { createHash, createHmac, randomUUID } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { startTestSmtpSink } from "@herald/testing";
import { type ParsedMail, simpleParser } from "mailparser";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { failureOf, outgoingEmail, testDomain, testSelector, testSigning } from "../test-support/provider-fixture.js";
import type { DkimSigningKey, MailProvider } from "./mail-provider.js";
import { classifySesError, createSesProvider } from "./ses-provider.js";
import { createSmtpProvider } from "./smtp-provider.js";

const domain = testDomain;
const selector = testSelector;
const region = "eu-west-1";
const credentials = { accessKeyId: "AKIAHERALDTEST", secretAccessKey: "herald-test-secret-access-key" };

/** One request as the stand-in SESv2 endpoint received it, body untouched (the signature covers it). */
interface SesRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** What the stand-in answers for one recipient: an SES error (status and type) instead of a MessageId. */
interface SesAnswer {
  status: number;
  errorType: string;
  message: string;
}

/**
 * A local HTTP server standing in for the SESv2 endpoint (via SES_ENDPOINT): it records each request,
 * and answers SendEmail with a MessageId, or with the error set for the recipient, as SES's REST-JSON
 * protocol writes errors (`x-amzn-ErrorType` header, `message` in the body).
 */
async function startSesStandIn() {
  const requests: SesRequest[] = [];
  const answers = new Map<string, SesAnswer>();
  const sockets = new Set<Socket>();
  let silent = false;
  const server: Server = createServer(async (incoming, outgoing) => {
    const chunks: Buffer[] = [];
    for await (const chunk of incoming) chunks.push(chunk as Buffer);
    const request = {
      method: incoming.method ?? "",
      path: incoming.url ?? "",
      headers: incoming.headers,
      body: Buffer.concat(chunks).toString(),
    };
    requests.push(request);
    if (silent) return;
    const to = (JSON.parse(request.body) as { Destination?: { ToAddresses?: string[] } }).Destination?.ToAddresses?.[0] ?? "";
    const answer = answers.get(to);
    if (answer) {
      outgoing
        .writeHead(answer.status, {
          "content-type": "application/json",
          "x-amzn-errortype": `${answer.errorType}:http://internal.amazon.com/coral/com.amazon.sesv2/`,
          "x-amzn-requestid": randomUUID(),
        })
        .end(JSON.stringify({ message: answer.message }));
      return;
    }
    outgoing
      .writeHead(200, { "content-type": "application/json", "x-amzn-requestid": randomUUID() })
      .end(JSON.stringify({ MessageId: `0102019${randomUUID()}-000000` }));
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    answers,
    /** Accepts requests and never answers them. */
    setSilent(value: boolean) {
      silent = value;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

type SesStandIn = Awaited<ReturnType<typeof startSesStandIn>>;

const sha256 = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");
const hmac = (key: string | Buffer, data: string) => createHmac("sha256", key).update(data).digest();

/** Checks an AWS Signature Version 4 the way AWS does: rebuilds the canonical request and signs it with the secret. */
function sigV4Of(request: SesRequest, secretAccessKey: string) {
  const authorization = String(request.headers.authorization ?? "");
  const match =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(
      authorization,
    );
  if (!match) return { valid: false, authorization };
  const [, accessKeyId, date, signedRegion, service, signedHeaders, signature] = match as unknown as string[];
  const amzDate = String(request.headers["x-amz-date"] ?? "");
  const headerNames = (signedHeaders ?? "").split(";");
  const canonicalHeaders = headerNames
    .map(
      (name) =>
        `${name}:${String(request.headers[name] ?? "")
          .trim()
          .replaceAll(/\s+/g, " ")}\n`,
    )
    .join("");
  const [path = "", query = ""] = request.path.split("?");
  const canonicalQuery = [...new URLSearchParams(query)]
    .map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`)
    .sort()
    .join("&");
  const canonicalRequest = [request.method, path, canonicalQuery, canonicalHeaders, signedHeaders, sha256(request.body)].join("\n");
  const scope = `${date}/${signedRegion}/${service}/aws4_request`;
  const stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, sha256(canonicalRequest)].join("\n");
  const key = hmac(hmac(hmac(hmac(`AWS4${secretAccessKey}`, date ?? ""), signedRegion ?? ""), service ?? ""), "aws4_request");
  const expected = createHmac("sha256", key).update(stringToSign).digest("hex");
  return { valid: expected === signature, accessKeyId, date, region: signedRegion, service, headerNames, amzDate };
}

let standIn: SesStandIn;
let provider: MailProvider;
let dkim: DkimSigningKey;
let dkimResultOf: Awaited<ReturnType<typeof testSigning>>["dkimResultOf"];

beforeAll(async () => {
  standIn = await startSesStandIn();
  provider = createSesProvider({ region, endpoint: standIn.url, credentials, configurationSet: "herald-events" });
  ({ dkim, dkimResultOf } = await testSigning());
});

afterAll(async () => {
  await provider?.close();
  await standIn?.close();
});

beforeEach(() => {
  standIn.setSilent(false);
});

interface SendEmailBody {
  FromEmailAddress?: string;
  Destination?: { ToAddresses?: string[] };
  Content?: { Raw?: { Data?: string } };
  ConfigurationSetName?: string;
}

/** The SendEmail request that carried the email to `to`, and the raw MIME message in it. */
function sendEmailRequestTo(to: string) {
  const found = standIn.requests.filter((request) => (JSON.parse(request.body) as SendEmailBody).Destination?.ToAddresses?.[0] === to);
  expect(found).toHaveLength(1);
  const request = found[0] as SesRequest;
  const body = JSON.parse(request.body) as SendEmailBody;
  return { request, body, raw: Buffer.from(body.Content?.Raw?.Data ?? "", "base64") };
}

const unfoldedHeader = (parsed: ParsedMail, name: string) =>
  parsed.headerLines.filter((line) => line.key === name).map((line) => line.line.replaceAll(/\r?\n(?=[ \t])/g, ""));

describe("SES provider", () => {
  it("sends a SigV4-signed SESv2 SendEmail whose raw message is DKIM-signed with the domain's key", async () => {
    const email = outgoingEmail({
      headers: { "X-Campaign": "spring-sale" },
      listUnsubscribe: { url: "https://herald.example/unsubscribe/t0k3n", mailto: `unsubscribe@${domain}` },
      messageId: `<${randomUUID()}@${domain}>`,
    });
    const result = await provider.send(email, dkim);
    const { request, body, raw } = sendEmailRequestTo(email.to.email);

    expect(request.method).toBe("POST");
    expect(request.path).toBe("/v2/email/outbound-emails");
    expect(request.headers["content-type"]).toMatch(/^application\/json/);
    const signature = sigV4Of(request, credentials.secretAccessKey);
    expect(signature).toMatchObject({ valid: true, accessKeyId: credentials.accessKeyId, region, service: "ses" });
    expect(signature.headerNames).toEqual(expect.arrayContaining(["host", "x-amz-date"]));
    // The check is real: the same request does not verify with another secret, nor with another body.
    expect(sigV4Of(request, "another-secret").valid).toBe(false);
    expect(sigV4Of({ ...request, body: request.body.replace("herald-events", "other-events") }, credentials.secretAccessKey).valid).toBe(
      false,
    );

    expect(body.FromEmailAddress).toBe(`orders@${domain}`);
    expect(body.Destination).toEqual({ ToAddresses: [email.to.email] });
    expect(body.ConfigurationSetName).toBe("herald-events");
    expect(result.providerMessageId).toMatch(/^0102019[0-9a-f-]{36}-000000$/);
    expect(result.response).toContain(result.providerMessageId);

    const text = raw.toString("utf8");
    expect(text).toMatch(/\r\n\r\n/);
    expect(text).not.toMatch(/[^\r]\n/);
    const parsed = await simpleParser(raw);
    expect(parsed.messageId).toBe(email.messageId);
    expect(parsed.subject).toBe("Order 1234 has shipped");
    expect(parsed.from?.value).toEqual([{ address: `orders@${domain}`, name: "Example Shop" }]);
    expect(unfoldedHeader(parsed, "x-herald-email-id")).toEqual([`X-Herald-Email-ID: ${email.emailId}`]);
    expect(unfoldedHeader(parsed, "list-unsubscribe")).toEqual([
      `List-Unsubscribe: <https://herald.example/unsubscribe/t0k3n>, <mailto:unsubscribe@${domain}>`,
    ]);
    expect(unfoldedHeader(parsed, "list-unsubscribe-post")).toEqual(["List-Unsubscribe-Post: List-Unsubscribe=One-Click"]);
    expect(unfoldedHeader(parsed, "x-mailer")).toEqual([]);
    expect(parsed.text).toContain("Order 1234 is on its way. Track it [https://shop.example/track/1234].");

    const dkimHeader = unfoldedHeader(parsed, "dkim-signature").join("").replaceAll(/\s+/g, "");
    expect(dkimHeader).toContain(`d=${domain};`);
    expect(dkimHeader).toContain(`s=${selector};`);
    expect(dkimHeader).toMatch(/;h=[^;]*list-unsubscribe:list-unsubscribe-post/i);
    // SES may set Message-ID and Date itself: AWS asks that they stay out of a signature made before SES.
    expect(dkimHeader).not.toMatch(/;h=[^;]*\b(message-id|date)\b/i);
    expect(await dkimResultOf(raw)).toBe("pass");
    // Tampering with the body fails the signature.
    expect(await dkimResultOf(text.replace("Order 1234 is on its way", "Order 9999 is on its way"))).toBe("fail");
  });

  it("builds the same message as the SMTP provider: headers, both parts and attachment", async () => {
    const sink = await startTestSmtpSink();
    const smtp = createSmtpProvider({ url: sink.url });
    try {
      const pdf = Buffer.from("%PDF-1.4 an invoice\n");
      const email = outgoingEmail({
        messageId: `<${randomUUID()}@${domain}>`,
        replyTo: { email: "support@example.com", name: "Support" },
        headers: { "X-Entity-Ref-ID": "1234" },
        attachments: [{ filename: "invoice-1234.pdf", content: pdf, contentType: "application/pdf" }],
        listUnsubscribe: { url: "https://herald.example/unsubscribe/t0k3n" },
      });
      await smtp.send(email, dkim);
      const [overSmtp] = await sink.waitForMessages(1, { to: email.to.email });
      await provider.send(email, dkim);
      const overSes = sendEmailRequestTo(email.to.email).raw;

      const summary = async (raw: Buffer | string) => {
        const parsed = await simpleParser(raw);
        const headers = parsed.headerLines
          .map((line) => line.key)
          .filter((key) => !["date", "dkim-signature", "content-type"].includes(key))
          .map((key) => unfoldedHeader(parsed, key));
        return {
          headers,
          text: parsed.text,
          html: parsed.html,
          attachments: parsed.attachments.map((a) => [a.filename, a.contentType, a.content.toString("base64")]),
        };
      };
      expect(await summary(overSes)).toEqual(await summary(overSmtp?.raw ?? ""));
      expect(await dkimResultOf(overSmtp?.raw ?? "")).toBe("pass");
      expect(await dkimResultOf(overSes)).toBe("pass");
    } finally {
      await smtp.close();
      await sink.stop();
    }
  });

  it.each([
    [400, "MessageRejected", "Email address is not verified.", "permanent", "rejected"],
    [400, "MailFromDomainNotVerifiedException", "MAIL FROM domain is not verified", "permanent", "rejected"],
    [400, "AccountSuspendedException", "account suspended", "permanent", "rejected"],
    [404, "NotFoundException", "Configuration set herald-events does not exist", "permanent", "rejected"],
    [400, "BadRequestException", "Illegal address", "permanent", "invalid-message"],
    [429, "TooManyRequestsException", "Maximum sending rate exceeded.", "temporary", "rejected"],
    [400, "LimitExceededException", "Daily message quota exceeded.", "temporary", "rejected"],
    [400, "SendingPausedException", "sending paused for this account", "temporary", "rejected"],
    [403, "UnrecognizedClientException", "The security token included in the request is invalid.", "temporary", "authentication"],
    [403, "AccessDeniedException", "not authorized to perform: ses:SendEmail", "temporary", "authentication"],
    [500, "InternalServiceErrorException", "internal error", "temporary", "rejected"],
    [503, "ServiceUnavailable", "Service unavailable", "temporary", "rejected"],
  ] as const)("reads HTTP %i %s as a %s failure (%s), never blaming the address", async (status, errorType, message, kind, reason) => {
    const email = outgoingEmail();
    standIn.answers.set(email.to.email, { status, errorType, message });
    const failure = await failureOf(provider.send(email, dkim));
    expect(failure).toMatchObject({ kind, reason, recipientRejected: false });
    expect(failure.response).toBe(`SES ${status} ${errorType}: ${message}`);
  });

  it("sends nothing with a DKIM key that cannot sign, or a header with a line break: permanent failures", async () => {
    const before = standIn.requests.length;
    const badKey = await failureOf(
      provider.send(outgoingEmail(), { ...dkim, privateKey: "-----BEGIN PRIVATE KEY-----\nno\n-----END PRIVATE KEY-----" }),
    );
    expect(badKey).toMatchObject({ kind: "permanent", reason: "dkim-key" });
    const injected = await failureOf(provider.send(outgoingEmail({ headers: { "X-Campaign": "a\r\nBcc: everyone@example.org" } }), dkim));
    expect(injected).toMatchObject({ kind: "permanent", reason: "invalid-message" });
    expect(standIn.requests.length).toBe(before);
  });

  it("reports an endpoint that is not listening as a temporary connection failure", async () => {
    const closed = await startSesStandIn();
    await closed.close();
    const unreachable = createSesProvider({ region, endpoint: closed.url, credentials });
    try {
      expect(await failureOf(unreachable.send(outgoingEmail(), dkim))).toMatchObject({ kind: "temporary", reason: "connection" });
    } finally {
      await unreachable.close();
    }
  });

  it("reports an endpoint that never answers as a temporary timeout", async () => {
    standIn.setSilent(true);
    const stalled = createSesProvider({ region, endpoint: standIn.url, credentials, sendTimeoutMs: 300 });
    try {
      expect(await failureOf(stalled.send(outgoingEmail(), dkim))).toMatchObject({ kind: "temporary", reason: "timeout" });
    } finally {
      await stalled.close();
    }
  });

  it("finishes the sends in flight when closed, and refuses later ones as temporary", async () => {
    const closing = createSesProvider({ region, endpoint: standIn.url, credentials });
    const sending = closing.send(outgoingEmail(), dkim);
    await closing.close();
    await expect(sending).resolves.toMatchObject({ providerMessageId: expect.stringMatching(/^0102019/) });
    expect(await failureOf(closing.send(outgoingEmail(), dkim))).toMatchObject({ kind: "temporary", reason: "closed" });
  });

  it("reads errors without an SES answer: a credentials chain that finds nothing is an authentication failure", () => {
    const noCredentials = Object.assign(new Error("Could not load credentials from any providers"), { name: "CredentialsProviderError" });
    expect(classifySesError(noCredentials)).toMatchObject({ kind: "temporary", reason: "authentication" });
    expect(classifySesError(Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }))).toMatchObject({ reason: "connection" });
    expect(classifySesError(new Error("something else"))).toMatchObject({ kind: "temporary", reason: "unknown" });
  });
});
