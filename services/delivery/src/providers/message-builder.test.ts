import { createPrivateKey, createPublicKey } from "node:crypto";
import { simpleParser } from "mailparser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { outgoingEmail, testDomain, testSigning } from "../test-support/provider-fixture.js";
import { toNodemailerMessage } from "./message.js";
import { createMessageBuilder, type MessageBuilder } from "./message-builder.js";
import type { BuildRequest } from "./signed-message.js";
import { dkimSignedHeaderFields } from "./smtp-provider.js";

let signing: Awaited<ReturnType<typeof testSigning>>;
let inline: MessageBuilder;
let threaded: MessageBuilder;

beforeAll(async () => {
  signing = await testSigning();
  inline = createMessageBuilder(0);
  threaded = createMessageBuilder(2);
});

afterAll(async () => {
  await Promise.all([inline?.close(), threaded?.close()]);
});

// Every byte value, so that a thread hop that mangled binary content would show.
const attachment = Buffer.from(Array.from({ length: 3 * 256 }, (_, index) => index % 256));

function request(): BuildRequest {
  const message = toNodemailerMessage(
    outgoingEmail({
      subject: "Grüße: Order 1234 has shipped",
      headers: { "X-Campaign": "spring-sale" },
      attachments: [{ filename: "bytes.bin", content: attachment, contentType: "application/octet-stream" }],
    }),
  );
  const { dkim } = signing;
  return {
    message,
    dkim: { domainName: dkim.domainName, keySelector: dkim.keySelector, privateKey: createPrivateKey(dkim.privateKey) },
    headerFieldNames: dkimSignedHeaderFields,
  };
}

describe("message builder", () => {
  it("builds in a thread the same signed message as on the calling thread", async () => {
    const sent = request();
    const [own, other] = await Promise.all([inline.build(sent), threaded.build(sent)]);
    for (const built of [own, other]) {
      expect(Buffer.isBuffer(built.raw)).toBe(true);
      expect(await signing.dkimResultOf(built.raw)).toBe("pass");
      expect(built.envelope).toEqual({
        from: `orders@${testDomain}`,
        to: [expect.stringMatching(/@example\.org$/)],
      });
    }
    const [mine, theirs] = await Promise.all([simpleParser(own.raw), simpleParser(other.raw)]);
    expect(theirs.messageId).toBe(sent.message.messageId);
    expect(theirs.subject).toBe("Grüße: Order 1234 has shipped");
    expect(theirs.headers.get("x-campaign")).toBe("spring-sale");
    expect(theirs.html).toBe(mine.html);
    expect(theirs.text).toBe(mine.text);
    expect(theirs.text).toContain("Order 1234 is on its way. Track it [https://shop.example/track/1234].");
    expect(theirs.attachments.map((part) => [part.filename, part.contentType])).toEqual([["bytes.bin", "application/octet-stream"]]);
    expect(theirs.attachments[0]?.content.equals(attachment)).toBe(true);
  });

  it("builds many messages at once across its threads, each signed", async () => {
    const built = await Promise.all(Array.from({ length: 100 }, () => threaded.build(request())));
    const results = await Promise.all(built.map((message) => signing.dkimResultOf(message.raw)));
    expect(new Set(results)).toEqual(new Set(["pass"]));
    expect(new Set(built.map((message) => message.raw.toString()))).toHaveProperty("size", 100);
  });

  it("refuses a message it could not sign, on either thread, and goes on building", async () => {
    const broken = request();
    // A public key cannot sign: nodemailer would pass the message on unsigned.
    broken.dkim = { ...broken.dkim, privateKey: createPublicKey(broken.dkim.privateKey) };
    await expect(inline.build(broken)).rejects.toThrow(`the message could not be DKIM-signed for ${testDomain}`);
    await expect(threaded.build(broken)).rejects.toThrow(`the message could not be DKIM-signed for ${testDomain}`);
    expect(await signing.dkimResultOf((await threaded.build(request())).raw)).toBe("pass");
  });

  it("builds an urgent message before the bulk ones queued for a thread", async () => {
    // 2 threads × 16 tasks each take the first 32; the rest wait in the queue, where the urgent one goes first.
    const finished: string[] = [];
    const track = (label: string, lane: "urgent" | "bulk") =>
      threaded.build(request(), lane).then(() => {
        finished.push(label);
      });
    const bulk = Array.from({ length: 96 }, (_, index) => track(`bulk ${index}`, "bulk"));
    const urgent = track("urgent", "urgent");
    await Promise.all([...bulk, urgent]);
    // Kept in the order queued, it would finish last (the 97th). Taken next, it finishes with the tasks running beside it:
    // about the 48th, and the 52nd once with the whole suite loading the machine.
    expect(finished.indexOf("urgent")).toBeLessThan(64);
  });
});
