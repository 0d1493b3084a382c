import { type KeyObject, randomUUID } from "node:crypto";
import { compile } from "html-to-text";
import type { SendMailOptions } from "nodemailer";
import DKIM from "nodemailer/lib/dkim";
import MailComposer from "nodemailer/lib/mail-composer";

// This module is also the entry of the build threads (message-builder.ts). It imports packages only and
// its TypeScript is all erasable, so that a thread can load it as it is where nothing was compiled (tests).

export interface BuildRequest {
  /** The message without its plain-text part, which is made here from the HTML. */
  message: SendMailOptions & { html: string };
  dkim: { domainName: string; keySelector: string; privateKey: KeyObject };
  /** The header fields the signature covers, `:`-separated. */
  headerFieldNames: string;
}

export interface BuiltMessage {
  /** The message as it goes on the wire: RFC 5322, CRLF line ends, the DKIM-Signature field first. */
  raw: Uint8Array;
  envelope: NonNullable<SendMailOptions["envelope"]>;
}

/** Compiled once: compiling the options on every call cost as much as converting a receipt. */
const toPlainText = compile({
  wordwrap: 78,
  selectors: [
    { selector: "img", format: "skip" },
    { selector: "a", options: { hideLinkHrefIfSameAsText: true } },
  ],
});

/** The plain-text alternative: links as `text [url]`, images (the open pixel among them) left out. */
export function plainTextOf(html: string): string {
  return toPlainText(html);
}

const signatureField = Buffer.from("DKIM-Signature: ");

/** A Buffer again: bytes that crossed between threads arrive as a plain Uint8Array, which nodemailer does not take. */
export const bufferOf = (bytes: Uint8Array): Buffer =>
  Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/**
 * Builds the message with nodemailer's composer and signs it with nodemailer's DKIM signer: the
 * CPU-heavy part of a send (HTML to text, MIME encoding, RSA), done before the message waits for a
 * relay connection, and in a build thread when there are any.
 */
export async function buildSignedMessage({ message, dkim, headerFieldNames }: BuildRequest): Promise<BuiltMessage> {
  const node = new MailComposer({
    ...message,
    text: plainTextOf(message.html),
    attachments: (message.attachments ?? []).map((attachment) => ({
      ...attachment,
      content: attachment.content instanceof Uint8Array ? bufferOf(attachment.content) : attachment.content,
    })),
    // Content is always given inline: never let a message read a local file or fetch a URL.
    disableFileAccess: true,
    disableUrlAccess: true,
    // RFC 5322 line ends in the message itself, not only on the SMTP wire: SES takes it as it is.
    newline: "\r\n",
    // Otherwise each MIME part draws its own 8 random bytes: a UUID comes from a buffered pool.
    baseBoundary: randomUUID(),
  }).compile();
  const signer = new DKIM({ ...dkim, headerFieldNames });
  const chunks: Buffer[] = await signer.sign(await node.build()).toArray();
  const raw = Buffer.concat(chunks);
  // nodemailer passes a message it failed to sign on unsigned; that one must never reach a relay.
  if (!raw.subarray(0, signatureField.length).equals(signatureField))
    throw new Error(`the message could not be DKIM-signed for ${dkim.domainName}`);
  return { raw, envelope: message.envelope ?? node.getEnvelope() };
}

export default buildSignedMessage;
