import { createPrivateKey } from "node:crypto";
import fc from "fast-check";
import DKIM from "nodemailer/lib/dkim";
import RelaxedBody from "nodemailer/lib/dkim/relaxed-body";
import MailComposer from "nodemailer/lib/mail-composer";
import { beforeAll, describe, expect, it } from "vitest";
import { outgoingEmail, testDomain, testSigning } from "../test-support/provider-fixture.js";
import { type OutgoingEmail, toNodemailerMessage } from "./message.js";
import { type BuildRequest, buildSignedMessage, plainTextOf, relaxedBodyHash } from "./signed-message.js";
import { dkimSignedHeaderFields } from "./smtp-provider.js";

let signing: Awaited<ReturnType<typeof testSigning>>;

beforeAll(async () => {
  signing = await testSigning();
});

/** The same request, with what is otherwise drawn at random (the boundary, the date) fixed. */
function requestOf(email: OutgoingEmail): BuildRequest {
  const { dkim } = signing;
  return {
    message: { ...toNodemailerMessage(email), baseBoundary: "c0ffee", date: new Date("2026-11-25T12:00:00Z") },
    dkim: { domainName: dkim.domainName, keySelector: dkim.keySelector, privateKey: createPrivateKey(dkim.privateKey) },
    headerFieldNames: dkimSignedHeaderFields,
  };
}

/** The oracle: the message as nodemailer's own streams build it with CRLF line ends, then its DKIM signer. */
async function nodemailerSigned({ message, dkim, headerFieldNames }: BuildRequest): Promise<Buffer> {
  const root = new MailComposer({
    ...message,
    text: plainTextOf(message.html),
    newline: "\r\n",
    disableFileAccess: true,
    disableUrlAccess: true,
  }).compile();
  const signed: Buffer[] = await new DKIM({ ...dkim, headerFieldNames }).sign(await root.build()).toArray();
  return Buffer.concat(signed);
}

/** nodemailer's streaming body hash, as its signer computes it. */
function nodemailerBodyHash(body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hasher = new RelaxedBody({ hashAlgo: "sha256" });
    hasher.once("hash", resolve);
    hasher.once("error", reject);
    hasher.resume();
    hasher.end(Buffer.from(body, "latin1"));
  });
}

/** Text on one line, as headers, names and subjects must be (toNodemailerMessage refuses the rest). */
const oneLine = (maxLength: number) => fc.string({ unit: "binary", maxLength }).map((text) => text.replace(/[\r\n\0]/g, ""));

/** HTML with what encoders and canonicalization have to get right: whitespace runs, all line ends, long lines, non-ASCII, `=`. */
const html = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        "<p>",
        "</p>",
        " ",
        "  ",
        "\t",
        " \t ",
        "\r\n",
        "\n",
        "\r",
        "=",
        ".",
        "é",
        "日本語",
        "😀",
        '<a href="https://shop.example/a?b=c&d=e">link</a>',
      ),
      fc.string({ unit: "binary", maxLength: 40 }),
      fc.integer({ min: 70, max: 200 }).map((length) => "x".repeat(length)),
    ),
    { minLength: 1, maxLength: 60 },
  )
  .map((parts) => parts.join(""));

const attachment = fc.record({
  filename: oneLine(30).map((name) => name || "file"),
  contentType: fc.constantFrom("application/octet-stream", "image/png", "text/plain", "text/csv"),
  content: fc.oneof(
    fc.uint8Array({ maxLength: 2_000 }),
    // Plain ASCII text goes out as it is (7bit): its trailing whitespace, blank lines and bare line ends reach the body hash.
    fc
      .array(fc.constantFrom("a", "b c", " ", "\t", "\r\n", "\n", "\r", "  "), { maxLength: 40 })
      .map((parts) => new TextEncoder().encode(parts.join(""))),
  ),
});

const email: fc.Arbitrary<OutgoingEmail> = fc
  .record({
    fromName: oneLine(60),
    toName: oneLine(60),
    toAddress: fc.constantFrom("ada@example.org", "ada@bücher.example", "o'brien+tag@example.org"),
    subject: oneLine(300),
    html,
    headers: fc.dictionary(fc.stringMatching(/^X-[A-Za-z0-9-]{1,20}$/), oneLine(200), { maxKeys: 3 }),
    attachments: fc.array(attachment, { maxLength: 3 }),
    replyTo: fc.option(fc.constant("support@mail.example.com"), { nil: undefined }),
    marketing: fc.boolean(),
  })
  .map((drawn) =>
    outgoingEmail({
      from: { email: `orders@${testDomain}`, name: drawn.fromName },
      to: { email: drawn.toAddress, name: drawn.toName },
      subject: drawn.subject,
      html: drawn.html,
      headers: drawn.headers,
      attachments: drawn.attachments.map((part) => ({ ...part, content: Buffer.from(part.content) })),
      ...(drawn.replyTo ? { replyTo: { email: drawn.replyTo } } : {}),
      ...(drawn.marketing ? { listUnsubscribe: { url: "https://herald.example/u/token", mailto: "unsubscribe@mail.example.com" } } : {}),
      messageId: `<fixed@${testDomain}>`,
    }),
  );

describe("signed message", () => {
  it("is byte for byte the message nodemailer's streams and DKIM signer make, for any email", async () => {
    await fc.assert(
      fc.asyncProperty(email, async (drawn) => {
        const request = requestOf(drawn);
        const built = await buildSignedMessage(request);
        expect(Buffer.from(built.raw).toString("latin1")).toBe((await nodemailerSigned(request)).toString("latin1"));
      }),
      { numRuns: 150 },
    );
  });

  it("is the same for bodies larger than nodemailer's 64 KiB encoding slices", async () => {
    const request = requestOf(outgoingEmail({ html: `<p>${"Größe and spaces  \t".repeat(8_000)}</p>\n`.repeat(2) }));
    const built = Buffer.from((await buildSignedMessage(request)).raw);
    expect(built.length).toBeGreaterThan(200_000);
    expect(built.equals(await nodemailerSigned(request))).toBe(true);
    expect(await signing.dkimResultOf(built)).toBe("pass");
  });

  it("hashes any body as nodemailer's relaxed canonicalization does", async () => {
    const body = fc
      .array(fc.constantFrom("a", "b", " ", "  ", "\t", "\r\n", "\n", "\r", "\r\n\r\n", " \r\n"), { maxLength: 50 })
      .map((parts) => parts.join(""));
    await fc.assert(
      fc.asyncProperty(body, async (drawn) => {
        expect(relaxedBodyHash(drawn)).toBe(await nodemailerBodyHash(drawn));
      }),
      { numRuns: 2_000 },
    );
  });
});
